package server

// MayDeliver reports whether a stored message shown on subject and
// delivered to inbox would reach a subscriber: the router's checks for a
// JetStream delivery (routeFrom with stored set), asked before the
// consumer counts the delivery, so that one no subscriber may receive is
// not counted (docs/security.md). A stream import is judged by the
// importer's subscribers where it delivers (importreach.go); a
// subscription across a leaf link or another import is judged where it
// leads, so it counts as one that may. With reference_stored_reads the
// stored subject is not checked, as by the reference: any subscriber
// counts. It allocates nothing but for an import mapped by a transform
// (see BenchmarkMayDeliver).
func (j jetstreamCore) MayDeliver(inbox, subject string) bool {
	if j.s.opts.Authorization.ReferenceStoredReads || inbox == subject {
		return j.HasInterest(inbox)
	}
	subj := stringBytes(subject)
	return anyReceiver(j.acc.trie, stringBytes(inbox), func(sub *subscription) bool {
		if sub.remote || sub.imported {
			return true
		}
		rights := sub.rights.Load()
		return rights == nil || rights.mayReceive(sub.queue, subj, true)
	})
}

// FiltersStored reports whether MayDeliver(inbox, …) can say no while
// someone listens: some subscriber of inbox, or of where a stream import
// of it delivers, has rights a stored subject is checked against. A push
// consumer asks it once a step and MayDeliver only when it is true, so a
// delivery to subscribers without permissions costs nothing more (see
// BenchmarkMayDeliver).
func (j jetstreamCore) FiltersStored(inbox string) bool {
	if j.s.opts.Authorization.ReferenceStoredReads {
		return false
	}
	return anyReceiver(j.acc.trie, stringBytes(inbox), rightsChecked)
}

func rightsChecked(sub *subscription) bool {
	return !sub.remote && !sub.imported && sub.rights.Load() != nil
}
