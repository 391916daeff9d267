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
	return from == nil || svc.sh.referenceReads || from.MayRead(subject)
}

// mayConsume makes the sender of a consumer create or update cfg's
// owner, if its rights cover what the consumer makes the server do
// (owner.go): its filters (every subject the stream may hold when it has
// none) readable, its push and dead-letter subjects publishable.
func (svc *Service) mayConsume(from Rights, cfg *consumerConfig, scfg streamConfig) *apiError {
	cfg.owner = ownerOf(from)
	return svc.sh.authorize(from, svc.sh.consumerFlow(*cfg, scfg))
}

// mayOwn makes the sender of a stream create or update cfg's owner, if
// its rights cover what the stream makes the server do (owner.go).
func (svc *Service) mayOwn(from Rights, cfg *streamConfig) *apiError {
	cfg.owner = ownerOf(from)
	return svc.sh.streamAllowed(from, *cfg)
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

// refusePull is the status that refuses a pull (MSG.NEXT, or an ack's
// +NXT) from a user who may not read all of the consumer's subjects, or
// "" to serve it. The core would drop each delivery such a pull gets
// (docs/security.md), so serving it would time the puller out with no
// word, while the consumer counted the message as delivered and, after
// max_deliver, dead-lettered it for a permission setting. Checked once
// per pull, on the puller's reader goroutine: deliveries cost nothing
// more. A 409, as the reference's statuses for a pull the consumer will
// not serve (Exceeded MaxRequestBatch, Consumer is push based): clients
// end the fetch with its description and keep the consumer.
func (c *consumer) refusePull(from Rights) string {
	if from == nil || c.sh.referenceReads || from.MayRead(">") {
		return ""
	}
	reads := c.cfg.filters()
	if len(reads) == 0 {
		reads = []string{">"}
		if st := c.sh.lookup(c.stream); st != nil {
			reads = c.sh.heldSubjects(st.config(), maxHeldDepth)
		}
	}
	if e := c.sh.authorize(from, flow{reads: reads}); e != nil {
		c.sh.log.Warn("pull refused: the puller may not read the consumer's subjects",
			"stream", c.stream, "consumer", c.name, "user", from.User(), "err", e.Description)
		return "409 Permissions Violation: " + e.Description
	}
	return ""
}
