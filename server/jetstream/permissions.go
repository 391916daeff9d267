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

// mayConsume checks a consumer config against its creator's rights
// (owner.go): its filters (every subject the stream may hold when it has
// none) must be readable, its push and dead-letter subjects publishable.
func (svc *Service) mayConsume(from Rights, cfg consumerConfig, scfg streamConfig) *apiError {
	return svc.sh.authorize(from, svc.sh.consumerFlow(cfg, scfg))
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
