package jetstream

// The limits of the account a service serves change while it runs, as
// the reference's do on a config reload or an account JWT update: what
// comes next meets the new ones (a stream create, a consumer create, a
// publish once the next limit check has summed the streams), while
// streams and consumers already over a lowered limit stay as they are.

// bounds are the limits in force: the account's storage limits (0 for
// none), its stream, consumer and ack pending limits, and Options.Limits
// with the account's folded in. Immutable: an update stores new ones.
type bounds struct {
	maxMemory, maxStorage int64
	account               AccountLimits
	limits                Limits
}

// bound is the limits in force: one atomic load.
func (sh *shared) bound() *bounds { return sh.bounds.Load() }

func (sh *shared) setBounds(maxMemory, maxStorage int64, account AccountLimits) {
	sh.bounds.Store(&bounds{maxMemory: maxMemory, maxStorage: maxStorage, account: account, limits: sh.baseLimits.withAccount(account)})
}

// UpdateAccountLimits puts an account's new JetStream limits in force:
// max_memory and max_store (0 for none), and its stream, consumer and
// ack pending limits. The streams are checked against the new storage
// limits before it returns, so the next publish meets them.
func (svc *Service) UpdateAccountLimits(maxMemory, maxStorage int64, account AccountLimits) {
	svc.limitsMu.Lock()
	svc.sh.setBounds(maxMemory, maxStorage, account)
	svc.limitsMu.Unlock()
	svc.checkLimits()
}
