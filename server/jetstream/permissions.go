package jetstream

// Stored messages are checked against the reader's subscribe rights, not
// only the subscription they are delivered to (docs/security.md): the
// core filters every delivery by the message's own subject, and here a
// user may not create a consumer over subjects it may not read, nor get
// a message it may not read, nor have the server republish dead letters
// where it may not publish. Options.ReferenceStoredReads turns the
// reading checks off, as the reference has none.

// mayRead reports whether the sender of a request may read subject.
func (svc *Service) mayRead(from Rights, subject string) bool {
	return from == nil || svc.referenceReads || from.MayRead(subject)
}

// mayConsume checks a consumer config against its creator's rights: its
// filters (every subject of the stream when it has none) must be
// readable, and its dead-letter subject publishable.
func (svc *Service) mayConsume(from Rights, cfg consumerConfig, scfg streamConfig) *apiError {
	if from == nil {
		return nil
	}
	filters := cfg.filters()
	if len(filters) == 0 {
		filters = scfg.Subjects
	}
	for _, f := range filters {
		if !svc.mayRead(from, f) {
			return errMayNotRead(from, f)
		}
	}
	if d := cfg.DeadLetterSubject; d != "" && !from.MayPublish(d) {
		return newAPIError(403, errCodePermissions, "user %q may not publish to dead-letter subject %q", from.User(), d)
	}
	return nil
}

// errCodePermissions is bus's err_code for a JetStream request its
// sender has no rights for (the reference has none: it checks only
// publishes and subscriptions). Part of the API (docs/api.md).
const errCodePermissions = 10403

func errMayNotRead(from Rights, subject string) *apiError {
	return newAPIError(403, errCodePermissions, "user %q may not read %q", from.User(), subject)
}

// readableCounts keeps, of a stream's per-subject counts, the subjects
// the sender of a request may read: STREAM.INFO's subjects_filter would
// otherwise list the names of subjects it may not read. A filter it may
// read whole needs no check per subject.
func (svc *Service) readableCounts(from Rights, filter string, counts map[string]uint64) map[string]uint64 {
	if svc.mayRead(from, filter) {
		return counts
	}
	for subj := range counts {
		if !from.MayRead(subj) {
			delete(counts, subj)
		}
	}
	return counts
}
