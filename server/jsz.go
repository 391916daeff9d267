package server

import (
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
)

// JszOptions are /jsz's query parameters (see jetstream.JszOptions).
type JszOptions = jetstream.JszOptions

// Jsz snapshots JetStream as /jsz does with o: the global account's and
// every account's with a JetStream of its own (acc= details one of
// them). Without JetStream it reports disabled, as the reference does.
func (s *Server) Jsz(o JszOptions) Jsz {
	if s.js == nil {
		return Jsz{ServerID: s.id, Now: time.Now().UTC(), Disabled: true}
	}
	j := jetstream.JszOf(s.id, o, s.jetStreams()...)
	s.fillJetStreamConfig(&j.Config)
	return j
}

// accountJetStream is one account's JetStream, for monitoring.
type accountJetStream struct {
	name string
	js   *jetstream.Service
}

// jetStreams are the running JetStream services: the global account's
// first, then the accounts' by name; nil without JetStream.
func (s *Server) jetStreams() []*jetstream.Service {
	all := s.accountJetStreams()
	out := make([]*jetstream.Service, len(all))
	for i, a := range all {
		out[i] = a.js
	}
	return out
}

// accountJetStreams are jetStreams with their accounts' names.
func (s *Server) accountJetStreams() []accountJetStream {
	if s.js == nil {
		return nil
	}
	out := []accountJetStream{{globalAccount, s.js}}
	for name, acc := range s.accountSet() {
		if js := acc.js.Load(); js != nil {
			out = append(out, accountJetStream{name, js})
		}
	}
	slices.SortFunc(out[1:], func(a, b accountJetStream) int { return strings.Compare(a.name, b.name) })
	return out
}
