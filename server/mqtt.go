package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// The MQTT listener. An accepted socket is admitted as an ordinary
// client connection (conn) with a session (mqttSession) beside it: the
// same writer goroutine, outbound queue, accounts, users, permissions
// and subject trie as the client port, and a reader goroutine that reads
// MQTT packets (mqttconn.go) instead of the NATS text protocol. Topics
// become subjects through server/mqtt's mapping, so a PUBLISH is routed
// as a PUB is, and a SUBSCRIBE is a subscription in the trie whose
// deliveries the outbound queue frames as PUBLISH packets (mqttout.go).
//
// With JetStream in the account, QoS 1 and 2 messages and sessions are
// stored there as the reference stores them (mqttjs.go, mqttqos.go,
// mqttsession.go), and retained messages in $MQTT_rmsgs
// (mqttretain*.go); without, a subscription is granted at QoS 0 and a
// CONNECT without clean session refused. What bus does not store at all
// (QoS 2 deliveries) is granted lower, as docs/mqtt.md says.
//
// Bounds before authentication are the client port's: the auth timeout
// (the mqtt block's authorization timeout, else the top-level one)
// bounds the time to a CONNECT, MaxUnauthenticated and MaxConnections
// the sockets, and a CONNECT is read under mqttMaxConnect bytes.

// mqttState is the listener's running state, set by startMQTT.
type mqttState struct {
	ln  net.Listener
	tls bool
	// retained are the retained messages by account (mqttretain.go),
	// guarded by their own locks.
	retained mqttRetainedSet

	mu sync.Mutex // guards the fields below; taken after conn.mu never, alone
	// clients are the connected sessions by client id: a CONNECT with
	// an id already here takes it over (the old connection is closed).
	clients map[string]*conn
	// flappers are the client ids taken over within mqttFlapJail; a
	// further CONNECT with one is held that long and closed, so that two
	// devices with one id do not take it from each other in a tight loop.
	flappers map[string]time.Time
	// js is each account's MQTT storage in JetStream (mqttjs.go).
	js map[*account]*mqttJS
}

// mqttFlapJail is how long a client id stays contended after a takeover
// (the reference's one second).
const mqttFlapJail = time.Second

// startMQTT opens the listener; called by Start with s.mu held.
func (s *Server) startMQTT() error {
	o := s.opts.MQTT
	addr := net.JoinHostPort(o.Host, strconv.Itoa(max(o.Port, 0)))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: mqtt listen on %s: %w", addr, err)
	}
	st := &mqttState{clients: map[string]*conn{}, flappers: map[string]time.Time{}}
	if o.TLS.enabled() {
		cfg, err := loadTLS(o.TLS)
		if err != nil {
			_ = ln.Close()
			return err
		}
		// The handshake runs in the reader's first Read, bounded by the
		// auth timer like the CONNECT after it.
		ln = tls.NewListener(ln, cfg)
		st.tls = true
	}
	st.ln = ln
	s.mqtt = st
	s.wg.Add(1)
	go s.acceptLoop(ln, "mqtt", s.acceptMQTT)
	s.log.Info("listening for mqtt clients", "addr", ln.Addr().String(), "tls", st.tls)
	return nil
}

// acceptMQTT admits an accepted socket as an MQTT client.
func (s *Server) acceptMQTT(nc net.Conn) {
	c := newConn(s, nc, s.nextID.Add(1))
	c.mqtt = newMQTTSession(s.liveOpts())
	c.out.mqtt = true
	s.admit(c)
}

// stopMQTT closes the listener; connections are closed with the others.
func (s *Server) stopMQTT() {
	if s.mqtt != nil {
		_ = s.mqtt.ln.Close()
	}
}

// MQTTAddr is the MQTT listener's address, or nil when it is off or
// before Start.
func (s *Server) MQTTAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mqtt == nil {
		return nil
	}
	return s.mqtt.ln.Addr()
}

// mqttVarz is /varz's mqtt section: the listener's settings and the
// port it bound.
func (s *Server) mqttVarz() monitor.MQTTVarz {
	o := s.opts.MQTT
	if !o.enabled() {
		return monitor.MQTTVarz{}
	}
	v := monitor.MQTTVarz{Host: o.Host, Port: o.Port, NoAuthUser: o.NoAuthUser, AuthTimeout: o.Authorization.Timeout.Seconds(),
		AckWait: int64(o.AckWait), MaxAckPending: o.MaxAckPending}
	if o.TLS.enabled() {
		v.TLSTimeout = o.TLS.Timeout.Seconds()
	}
	if a, ok := s.MQTTAddr().(*net.TCPAddr); ok {
		v.Port = a.Port
	}
	return v
}

// takeClientID registers c as the connection of its client id. An
// earlier connection with the id is taken over: its will is dropped
// and it is closed, as [MQTT-3.1.4-2] asks. It reports false when the id
// was taken over within mqttFlapJail: the caller then holds the new
// connection for that long and closes it.
func (m *mqttState) takeClientID(c *conn, id string, now time.Time) (old *conn, jailed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.flappers[id]; ok {
		if now.Sub(t) < mqttFlapJail {
			return nil, true
		}
		delete(m.flappers, id)
	}
	old = m.clients[id]
	m.clients[id] = c
	if old != nil && old.closing.Load() {
		old = nil // closed before it could register; nothing to take over
	}
	if old != nil {
		m.flappers[id] = now
		for k, t := range m.flappers { // keep the map to the contended ids
			if now.Sub(t) >= mqttFlapJail {
				delete(m.flappers, k)
			}
		}
	}
	return old, false
}

// releaseClientID forgets c as its client id's connection, unless a
// newer one took the id over.
func (m *mqttState) releaseClientID(c *conn, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.clients[id] == c {
		delete(m.clients, id)
	}
}
