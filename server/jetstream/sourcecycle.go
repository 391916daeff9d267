package jetstream

import "github.com/bus-dev/bus/subjects"

// checkSourceCycles refuses (10052 "detected cycle") a config whose
// local sources and mirror reach one stream twice, by the reference's
// rule: walk breadth first from cfg through the local origins that exist
// (external ones are another server's), marking each stream as it is
// walked. A source naming a stream already walked is a cycle when its
// filter (none, or one that collides with the subjects of the stream
// that names it) could bring that stream's messages round again; a
// mirror naming a stream already walked always is. So a stream sourcing
// both an origin and a mirror of that origin is refused, though its
// copies would not loop: the rule is the reference's, not a loop test,
// and configs nats-server refuses must not be accepted here.
func (svc *Service) checkSourceCycles(cfg *streamConfig) *apiError {
	toVisit := []streamConfig{*cfg}
	walked := map[string]bool{}
	for len(toVisit) > 0 {
		at := toVisit[0]
		toVisit = toVisit[1:]
		walked[at.Name] = true
		for _, s := range at.Sources {
			if s == nil || s.External != nil {
				continue
			}
			if walked[s.Name] {
				if filterReaches(at.Subjects, s.FilterSubject) {
					return errStreamConfig("detected cycle")
				}
			} else if origin := svc.stream(s.Name); origin != nil {
				toVisit = append(toVisit, origin.config())
			}
		}
		if m := at.Mirror; m != nil && m.External == nil {
			if walked[m.Name] {
				return errStreamConfig("detected cycle")
			}
			if origin := svc.stream(m.Name); origin != nil {
				toVisit = append(toVisit, origin.config())
			}
		}
	}
	return nil
}

// filterReaches says whether a source's filter lets through messages on
// some of the subjects a stream captures; no filter lets all through.
func filterReaches(streamSubjects []string, filter string) bool {
	if filter == "" {
		return true
	}
	for _, s := range streamSubjects {
		if subjects.Overlap(s, filter) {
			return true
		}
	}
	return false
}
