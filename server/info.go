package server

import (
	"encoding/json"
	"runtime"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/server/monitor"
)

// Identity is who a server is, as INFO and /varz both report it (see
// monitor.Identity).
type Identity = monitor.Identity

func (s *Server) identity() Identity {
	host, port := s.infoHostPort()
	return Identity{
		ServerID:   s.id,
		ServerName: s.name,
		Version:    Version,
		Proto:      1,
		Go:         runtime.Version(),
		Host:       host,
		Port:       port,
	}
}

// serverInfo is the INFO a client gets on connect, with the fields nats.go
// reads (PROTOCOL.md §2.1).
type serverInfo struct {
	Identity
	Headers      bool   `json:"headers"`
	MaxPayload   int    `json:"max_payload"`
	JetStream    bool   `json:"jetstream,omitempty"`
	ClientID     uint64 `json:"client_id"`
	ClientIP     string `json:"client_ip,omitempty"`
	AuthRequired bool   `json:"auth_required,omitempty"`
	TLSRequired  bool   `json:"tls_required,omitempty"`
	TLSVerify    bool   `json:"tls_verify,omitempty"`
	Nonce        string `json:"nonce,omitempty"`
	// APILevel is the JetStream API level, which the reference sends
	// whether or not JetStream is on.
	APILevel int `json:"api_lvl,omitempty"`
	// Domain is the JetStream domain, if any.
	Domain string `json:"domain,omitempty"`
	// LameDuckMode tells the client the server is going away
	// (lameduck.go).
	LameDuckMode bool `json:"ldm,omitempty"`
}

// infoFor renders the INFO line for a new connection. The reference ends
// it with "} \r\n"; so do we.
func (s *Server) infoFor(c *conn) string {
	js, _ := json.Marshal(s.infoFields(c)) // a struct of plain fields cannot fail
	return "INFO " + string(js) + " \r\n"
}

// infoFields is the INFO for c, as a value.
func (s *Server) infoFields(c *conn) serverInfo {
	if c.ws {
		// As the reference: a WebSocket client's TLS is the listener's.
		info := s.tcpInfoFields(c)
		info.TLSRequired, info.TLSVerify = s.ws.tls, false
		return info
	}
	return s.tcpInfoFields(c)
}

func (s *Server) tcpInfoFields(c *conn) serverInfo {
	return serverInfo{
		Identity:   s.identity(),
		Headers:    !s.opts.NoHeaderSupport,
		MaxPayload: s.liveOpts().MaxPayload,
		JetStream:  s.opts.JetStream,
		APILevel:   jetstream.APILevel,
		Domain:     s.opts.JetStreamDomain,
		ClientID:   c.id,
		ClientIP:   c.ip,
		// With a no_auth_user a client need not authenticate, and the
		// reference then leaves auth_required out.
		AuthRequired: c.auth().required && c.auth().noAuth == nil,
		Nonce:        c.nonce,
		TLSRequired:  s.opts.TLS.enabled(),
		TLSVerify:    s.opts.TLS.verifying(),
	}
}
