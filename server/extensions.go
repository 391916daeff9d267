package server

import "encoding/json"

// infoSubject is where bus answers "who are you" requests. nats-server has
// no subscriber there, so a client asking it gets the no-responders status
// and knows it is not talking to bus. Part of the client-visible API
// (docs/api.md): never rename.
const infoSubject = "$BUS.INFO"

// Extension names advertised on infoSubject, one per x_bus_* feature a
// client may rely on. Part of the client-visible API: never rename.
const (
	extDeadLetterSubject = "dead_letter_subject" // x_bus_dead_letter_subject
	extBackOffJitter     = "backoff_jitter"      // x_bus_backoff_jitter
	extNakBackOff        = "nak_backoff"         // x_bus_nak_backoff
	extGroupBy           = "group_by"            // x_bus_group_by
	extLagAlert          = "lag_alert"           // x_bus_lag_alert
	extRedrive           = "dlq_redrive"         // $BUS.API.DLQ.REDRIVE
)

// busInfo is the reply on infoSubject.
type busInfo struct {
	Server     string   `json:"server"` // always "bus"
	Version    string   `json:"version"`
	JetStream  bool     `json:"jetstream"`
	Extensions []string `json:"extensions"` // empty without JetStream
}

// startExtensions subscribes the server to infoSubject. It cannot fail for
// a valid literal subject; should the trie refuse it, bus still works and
// clients simply see a server without extensions.
func (s *Server) startExtensions() {
	info := busInfo{Server: "bus", Version: Version, JetStream: s.opts.JetStream, Extensions: []string{}}
	if s.opts.JetStream {
		info.Extensions = []string{extDeadLetterSubject, extBackOffJitter, extNakBackOff, extGroupBy, extLagAlert, extRedrive}
	}
	reply, _ := json.Marshal(info) // plain fields cannot fail
	_, err := s.subscribeInternal(infoSubject, func(_, replyTo []byte, _ int, _ []byte) bool {
		if len(replyTo) == 0 {
			return false // nobody to answer: not taken
		}
		// sendInternal copies the subject and the body into the queue.
		s.sendInternal(string(replyTo), "", nil, reply)
		return true
	})
	if err != nil {
		s.log.Warn("extensions info not served", "subject", infoSubject, "err", err)
	}
}

// stopExtensions removes the server's own subscription on infoSubject.
func (s *Server) stopExtensions() {
	r := s.subs.MatchString(infoSubject)
	for _, sub := range r.Plain {
		if sub.conn == nil && sub.subject == infoSubject {
			s.unsubscribeInternal(sub)
		}
	}
}
