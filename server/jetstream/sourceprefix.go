package jetstream

import "github.com/bus-dev/bus/subjects"

// checkDeliverPrefixes refuses, as the reference does (10022), an
// external source's deliver prefix under which the deliveries would
// collide with the subjects of a stream this config sources locally:
// the sourcing consumer delivers to <prefix>.<subject>, and a prefix
// such that <prefix>.<subject> matches <subject> again would feed the
// local origin's copies back into it. Only the sources count (not a
// mirror), and only origins of this server that exist.
func (svc *Service) checkDeliverPrefixes(cfg *streamConfig) *apiError {
	var prefixes, subs []string
	for _, s := range cfg.Sources {
		if s == nil {
			continue
		}
		if e := s.External; e != nil {
			if e.Deliver != "" {
				prefixes = append(prefixes, e.Deliver)
			}
			continue
		}
		if origin := svc.stream(s.Name); origin != nil {
			subs = append(subs, origin.config().Subjects...)
		}
	}
	for _, p := range prefixes {
		for _, sub := range subs {
			if subjects.Overlap(sub, p+"."+sub) {
				return newAPIError(400, 10022, "stream external delivery prefix %s overlaps with stream subject %s", p, sub)
			}
		}
	}
	return nil
}
