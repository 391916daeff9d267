package jetstream

import "github.com/bus-dev/bus/jetlog"

// checkUpdate applies the reference's rules for what a stream update may
// change, and the adjustments that sealing makes: a sealed stream keeps
// everything it has (no max age), takes nothing more (discard new) and
// loses nothing (no deletes, purges or rollups).
func checkUpdate(old streamConfig, cfg *streamConfig) *apiError {
	switch {
	case cfg.Storage != old.Storage:
		return errStreamConfig("stream configuration update can not change storage type")
	case cfg.Retention != old.Retention:
		// The reference allows limits <-> interest; bus's log does not
		// yet re-evaluate what it holds, so it refuses any change.
		return errStreamConfig("stream configuration update can not change retention policy")
	case cfg.Mirror != nil && !sameJSON(old.Mirror, cfg.Mirror): // removing it promotes the mirror
		return newAPIError(400, 10055, "stream mirror configuration can not be updated")
	case old.Sealed && !cfg.Sealed:
		return errStreamConfig("stream configuration update can not unseal a sealed stream")
	case old.DenyDelete && !cfg.DenyDelete:
		return errStreamConfig("stream configuration update can not cancel deny message deletes")
	case old.DenyPurge && !cfg.DenyPurge:
		return errStreamConfig("stream configuration update can not cancel deny purge")
	case old.AllowMsgTTL && !cfg.AllowMsgTTL:
		return errStreamConfig("message TTL status can not be disabled")
	case old.AllowMsgCounter != cfg.AllowMsgCounter:
		return errStreamConfig("stream configuration update can not change message counter setting")
	case old.AllowMsgSchedules && !cfg.AllowMsgSchedules:
		return errStreamConfig("message schedules can not be disabled")
	case old.PersistMode != cfg.PersistMode:
		return errStreamConfig("stream configuration update can not change persist mode")
	}
	if cfg.Sealed {
		cfg.MaxAge = 0
		cfg.Discard = jetlog.DiscardNew
		cfg.DenyDelete, cfg.DenyPurge = true, true
		cfg.AllowRollup = false
	}
	return nil
}

func errStreamSealed() *apiError {
	return newAPIError(400, 10109, "invalid operation on sealed stream")
}
