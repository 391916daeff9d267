package server

// MayDeliver reports whether a stored message shown on subject and
// delivered to inbox would reach a subscriber: the router's checks for a
// JetStream delivery (routeFrom with stored set), asked before the
// consumer counts the delivery, so that one no subscriber may receive is
// not counted (docs/security.md). A subscription across a leaf link or
// an import is judged where it leads, so it counts as one that may. With
// reference_stored_reads the stored subject is not checked, as by the
// reference: any subscriber counts. It allocates nothing (see
// BenchmarkMayDeliver).
func (j jetstreamCore) MayDeliver(inbox, subject string) bool {
	r := j.acc.trie.MatchString(inbox)
	if j.s.opts.Authorization.ReferenceStoredReads || inbox == subject {
		return !r.Empty()
	}
	subj := stringBytes(subject)
	may := func(sub *subscription) bool {
		if sub.remote || sub.imported {
			return true
		}
		rights := sub.rights.Load()
		return rights == nil || rights.mayReceive(sub.queue, subj, true)
	}
	for _, sub := range r.Plain {
		if may(sub) {
			return true
		}
	}
	for i := range r.Queues {
		for _, sub := range r.Queues[i].Members {
			if may(sub) {
				return true
			}
		}
	}
	return false
}

// FiltersStored reports whether MayDeliver(inbox, …) can say no while
// someone listens: some subscriber of inbox has rights a stored subject
// is checked against. A push consumer asks it once a step and MayDeliver
// only when it is true, so a delivery to subscribers without
// permissions costs nothing more (see BenchmarkMayDeliver).
func (j jetstreamCore) FiltersStored(inbox string) bool {
	if j.s.opts.Authorization.ReferenceStoredReads {
		return false
	}
	r := j.acc.trie.MatchString(inbox)
	checked := func(sub *subscription) bool {
		return !sub.remote && !sub.imported && sub.rights.Load() != nil
	}
	for _, sub := range r.Plain {
		if checked(sub) {
			return true
		}
	}
	for i := range r.Queues {
		for _, sub := range r.Queues[i].Members {
			if checked(sub) {
				return true
			}
		}
	}
	return false
}
