package jetstream

import (
	"maps"
	"slices"
)

// subjectsPage is the page of per-subject counts STREAM.INFO answers
// with: the subjects in byte order from offset, at most limit of them,
// as the reference pages them. counts is returned as it is when it fits
// from the start; otherwise a new map, nil when offset is past the end.
func subjectsPage(counts map[string]uint64, offset, limit int) map[string]uint64 {
	if offset <= 0 && len(counts) <= limit {
		return counts
	}
	subjects := slices.Sorted(maps.Keys(counts))
	offset = min(max(offset, 0), len(subjects))
	subjects = subjects[offset:min(offset+limit, len(subjects))]
	if len(subjects) == 0 {
		return nil
	}
	page := make(map[string]uint64, len(subjects))
	for _, subj := range subjects {
		page[subj] = counts[subj]
	}
	return page
}

// subjectCountsPage is one page of STREAM.INFO's subjects_filter for the
// requester from, and the number of subjects matching in all. A requester
// who may read everything the filter matches pages through the log's
// sorted list (jetlog.Log.SubjectCountsPage: a page costs what it holds);
// one with narrower rights gets the subjects they may read, counted and
// sorted afresh for each page, since the list is per filter, not per user.
func (svc *Service) subjectCountsPage(from Rights, st *stream, filter string, offset int) (map[string]uint64, int) {
	if svc.mayRead(from, filter) {
		return st.log.SubjectCountsPage(filter, offset, subjectsLimit)
	}
	counts := svc.readableCounts(from, filter, st.log.SubjectCounts(filter))
	return subjectsPage(counts, offset, subjectsLimit), len(counts)
}
