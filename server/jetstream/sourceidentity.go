package jetstream

// Stream identity (API level 5), the sourcer's side, as the reference's:
// a source asks its origin for a consumer at level 5 and, once it knows
// the origin's identity (named in the create's answer, then in every
// Nats-Stream-Source header it stores), expects it. An origin that was
// deleted and made again has another identity and refuses (10225): its
// seqs start over, so the source starts over too, from its start
// policy, rather than wait for the old origin's next seq. An origin
// below level 5 refuses the level (10185): it is asked again at level 4,
// without identity. A mirror asks at level 4 and keeps its seqs.

// createLevel is the API level a sourcer asks its origin for.
func (s *sourcer) createLevel() int {
	if s.mirror || s.levelRefused {
		return 4
	}
	return 5
}

// createHeader is the header of a consumer create to the origin.
func (s *sourcer) createHeader() []byte {
	if s.createLevel() == 4 {
		return statusHeader("", "Nats-Required-Api-Level", "4")
	}
	if s.ident == "" {
		return statusHeader("", "Nats-Required-Api-Level", "5")
	}
	return statusHeader("", "Nats-Required-Api-Level", "5", "Nats-Stream-Identity", s.ident)
}

// originRecreated handles a refused create: true when the sourcer is to
// ask again at once, because the origin was made again (it then starts
// over) or does not know level 5.
func (s *sourcer) originRecreated(resp consumerResponse) bool {
	if resp.Error == nil {
		return false
	}
	switch {
	case resp.Error.ErrCode == 10225 && s.createLevel() == 5:
		s.target.sh.log.Info("external source origin was made again, starting over",
			"stream", s.target.name, "origin", s.cfg.Name, "api", s.ext.API)
		s.ident, s.startOver = "", true
		s.next.Store(0) // consumerRequest asks externalStart, which starts over
		return true
	case resp.Error.ErrCode == 10185 && s.createLevel() == 5:
		s.levelRefused = true
		return true
	}
	return false
}
