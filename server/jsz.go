package server

import (
	"time"

	"github.com/bus-dev/bus/server/jetstream"
)

// JszOptions are /jsz's query parameters (see jetstream.JszOptions).
type JszOptions = jetstream.JszOptions

// Jsz snapshots JetStream as /jsz does with o. Without JetStream it
// reports disabled, as the reference does.
func (s *Server) Jsz(o JszOptions) Jsz {
	if s.js == nil {
		return Jsz{ServerID: s.id, Now: time.Now().UTC(), Disabled: true}
	}
	j := s.js.Jsz(s.id, o)
	s.fillJetStreamConfig(&j.Config)
	return j
}
