package jetlog

import "fmt"

// subjectSums adds up, per subject id, the live messages the sections of a
// catalog snapshot count, so consistent can check them against the
// subjects' own summaries. Ids are handed out in order from 0, so at a
// clean restart they are nearly dense: a slice indexed by id costs one
// allocation where a map of a million entries was about half of a
// reopen's profile (issue 30, BenchmarkManySubjectsRead). Ids spread too
// thin for a slice (many subjects gone since) fall back to a map.
type subjectSums struct {
	dense  []uint64 // sum+1 by id; 0 marks an id that is no subject
	sparse map[uint64]uint64
}

// newSubjectSums lists the ids with a sum of 0 each; an id listed twice
// is an error.
func newSubjectSums(ids []uint64) (*subjectSums, error) {
	var top uint64
	for _, id := range ids {
		top = max(top, id)
	}
	s := &subjectSums{}
	if len(ids) > 0 && top < 4*uint64(len(ids))+1024 {
		s.dense = make([]uint64, top+1)
		for _, id := range ids {
			if s.dense[id] != 0 {
				return nil, fmt.Errorf("subject id %d listed twice", id)
			}
			s.dense[id] = 1
		}
		return s, nil
	}
	s.sparse = make(map[uint64]uint64, len(ids))
	for _, id := range ids {
		if _, dup := s.sparse[id]; dup {
			return nil, fmt.Errorf("subject id %d listed twice", id)
		}
		s.sparse[id] = 0
	}
	return s, nil
}

// add counts n more messages for id, reporting false for an id not listed.
func (s *subjectSums) add(id, n uint64) bool {
	if s.sparse == nil {
		if id >= uint64(len(s.dense)) || s.dense[id] == 0 {
			return false
		}
		s.dense[id] += n
		return true
	}
	sum, ok := s.sparse[id]
	if ok {
		s.sparse[id] = sum + n
	}
	return ok
}

// sum is what id's sections count; an id not listed reads as 0.
func (s *subjectSums) sum(id uint64) uint64 {
	if s.sparse == nil {
		if id >= uint64(len(s.dense)) || s.dense[id] == 0 {
			return 0
		}
		return s.dense[id] - 1
	}
	return s.sparse[id]
}
