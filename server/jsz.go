package server

import (
	"net/http"
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
	j.Config.MaxMemory, j.Config.MaxStorage = s.jetStreamLimits()
	return j
}

func (s *Server) serveJsz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := JszOptions{
		Account: q.str("acc"), Accounts: q.bool("accounts"), Streams: q.bool("streams"),
		Consumers: q.bool("consumers"), Config: q.bool("config"), Offset: q.int("offset"), Limit: q.int("limit"),
		Raft: q.bool("raft"),
	}
	// Accepted and ignored: bus is one server, which leads everything,
	// and has no direct consumers.
	_, _, _ = q.bool("leader-only"), q.bool("stream-leader-only"), q.bool("direct-consumers")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, s.Jsz(o))
}
