package jetstream

import "strconv"

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

// mayConsume checks a consumer config against its creator's rights: its
// filters (every subject of the stream when it has none) must be
// readable, and its dead-letter subject publishable.
func (svc *Service) mayConsume(from Rights, cfg consumerConfig, scfg streamConfig) *apiError {
	if from == nil {
		return nil
	}
	for _, f := range readSubjects(&cfg, &scfg) {
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

// readSubjects are the subjects a consumer delivers from: its filters,
// or, when it has none, every subject its stream may hold. Those are the
// stream's subjects only when they are the one way in and stored as
// they are: a mirror, sources or a subject transform store other
// subjects, so then it is every subject.
func readSubjects(cfg *consumerConfig, scfg *streamConfig) []string {
	if f := cfg.filters(); len(f) > 0 {
		return f
	}
	if scfg.Mirror != nil || len(scfg.Sources) > 0 || scfg.SubjectTransform != nil || len(scfg.Subjects) == 0 {
		return everySubject
	}
	return scfg.Subjects
}

var everySubject = []string{">"}

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
	subjects := c.cfg.filters()
	if len(subjects) == 0 {
		subjects = everySubject
		if st := c.sh.lookup(c.stream); st != nil {
			scfg := st.config()
			subjects = readSubjects(&c.cfg, &scfg)
		}
	}
	for _, f := range subjects {
		if !from.MayRead(f) {
			c.sh.log.Warn("pull refused: the puller may not read the consumer's subjects",
				"stream", c.stream, "consumer", c.name, "user", from.User(), "subject", f)
			return "409 Permissions Violation: user " + strconv.Quote(from.User()) + " may not read " + strconv.Quote(f)
		}
	}
	return ""
}
