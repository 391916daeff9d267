package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
)

// An MQTT client's connection: the reader goroutine reads packets with
// server/mqtt's Reader and acts on each (CONNECT in mqttconnect.go,
// PUBLISH and the subscriptions in mqttpubsub.go); the writer is the
// conn's own. The subscriptions are the conn's, removed by close; with
// JetStream, the session that outlives the connection (its filters, QoS
// 1 consumers, unacknowledged deliveries) is an mqttStored beside it
// (mqttsession.go).

// mqttMaxConnect bounds a packet before CONNECT is accepted: a CONNECT
// with a will and credentials of every field's maximum size (five
// strings of 65535 bytes) fits; after it, packets are bounded by the
// payload limit (mqttMaxPacket).
const mqttMaxConnect = 5*(2+0xffff) + 16

// mqttMaxPacket is the largest packet accepted after CONNECT: a PUBLISH
// of maxPayload bytes on the longest topic.
func mqttMaxPacket(maxPayload int) int { return maxPayload + 2 + 0xffff + 2 + 5 }

// mqttSession is an MQTT connection's state beside its conn.
type mqttSession struct {
	// will is published when the connection closes other than by
	// DISCONNECT; a takeover or DISCONNECT clears it first (any
	// goroutine, hence atomic).
	will atomic.Pointer[mqttWill]

	// Owned by the reader goroutine.
	reader     *mqtt.Reader
	connected  bool
	keepAlive  time.Duration // the read deadline: 1.5 × the client's keepalive, 0 for none
	rejectQoS2 bool
	maxPayload int
	subject    []byte              // scratch: a topic mapped to a subject
	packet     []byte              // scratch: a control packet being built
	codes      []byte              // scratch: SUBACK return codes
	qos2       map[uint16]struct{} // QoS 2 publishes routed, awaiting PUBREL (without a session)
	stored     []byte              // scratch: a QoS 1 message with its header block

	// session is the JetStream-kept session (mqttsession.go), nil when
	// the account has no JetStream; set at CONNECT, read by close.
	session atomic.Pointer[mqttStored]
	// pipe is the QoS 1 stores in flight (mqttqospipe.go), made by the
	// reader at its first, closed by close.
	pipe atomic.Pointer[mqttAckPipe]
}

// mqttWill is a will message, ready to route: its subject mapped (and
// through the account's mappings), and allowed by the publish rules.
type mqttWill struct {
	subject, payload []byte
	// retained is the will's record when it has the retain flag, stored
	// under key, its topic's subject (mqttretainpub.go); nil without.
	retained *mqttRetainedRecord
	key      string
}

func newMQTTSession(o *Options) *mqttSession {
	return &mqttSession{rejectQoS2: o.MQTT.RejectQoS2Publish, maxPayload: o.MaxPayload}
}

// mqttSocket is what the Reader reads from. Before each read that would
// block it finishes what the packets read so far started, as readLoop
// does once per read: it stamps activity, hands queued frames to their
// writers, waits for a subscriber falling behind, takes a reload's
// rights and arms the keepalive.
type mqttSocket struct{ c *conn }

func (m mqttSocket) Read(p []byte) (int, error) {
	c := m.c
	c.finishRead()
	if c.reauth.Load() != nil {
		c.takeReload()
	}
	if ka := c.mqtt.keepAlive; ka > 0 {
		// [MQTT-3.1.2-24]: nothing heard for 1.5 × the keepalive.
		_ = c.nc.SetReadDeadline(time.Now().Add(ka))
	}
	return c.nc.Read(p)
}

// errMQTTClosed stops the reader once a packet closed the connection
// (DISCONNECT, a refusing CONNACK).
var errMQTTClosed = errors.New("mqtt: connection closed")

// mqttReadLoop is an MQTT connection's reader goroutine.
func (c *conn) mqttReadLoop() {
	m := c.mqtt
	m.reader = mqtt.NewReader(mqttSocket{c}, mqttMaxConnect)
	for {
		h, body, err := m.reader.Next()
		if err == nil {
			err = c.mqttHandle(h, body)
		}
		if err == nil {
			continue
		}
		c.wakeWriters()
		switch {
		case errors.Is(err, errMQTTClosed) || c.closing.Load():
		case errors.Is(err, io.EOF):
			c.close("Client Closed", false)
		case errors.Is(err, os.ErrDeadlineExceeded):
			c.close("Stale Connection", false)
		case errors.Is(err, errMQTTStore):
			c.log.Warn("mqtt store failed", "err", err)
			c.close("Store Failed: "+err.Error(), true)
		case errors.Is(err, mqtt.ErrMalformed) || errors.Is(err, mqtt.ErrTooLarge) || errors.Is(err, mqtt.ErrUnsupported) ||
			errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errMQTTProtocol):
			c.log.Warn("mqtt protocol error", "err", err)
			c.close("Protocol Error: "+err.Error(), true)
		default:
			c.close("Read Error: "+err.Error(), false)
		}
		return
	}
}

// errMQTTProtocol is a packet that breaks a rule the codec cannot see
// (a second CONNECT, a packet before CONNECT, a topic that does not map):
// the connection is closed, as MQTT has no error reply.
var errMQTTProtocol = errors.New("mqtt: protocol violation")

// mqttHandle acts on one packet.
func (c *conn) mqttHandle(h mqtt.Header, body []byte) error {
	m := c.mqtt
	if !m.connected {
		if h.Type != mqtt.CONNECT {
			return fmt.Errorf("%w: %s before CONNECT", errMQTTProtocol, h.Type)
		}
		if err := c.mqttConnect(body); err != nil {
			return err
		}
		m.reader.SetMax(mqttMaxPacket(c.parser.maxPayload))
		return nil
	}
	switch h.Type {
	case mqtt.PUBLISH:
		return c.mqttPublish(h.Flags, body)
	case mqtt.PUBREL:
		id, err := mqtt.DecodePacketID(h.Type, body)
		if err != nil {
			return err
		}
		c.mqttReleased(id)
		c.mqttSend(mqtt.AppendAck(m.packet[:0], mqtt.PUBCOMP, id))
	case mqtt.PUBACK:
		id, err := mqtt.DecodePacketID(h.Type, body)
		if err != nil {
			return err
		}
		c.mqttPuback(id)
	case mqtt.PUBREC, mqtt.PUBCOMP:
		// Acks of QoS 2 deliveries, which bus does not send.
		if _, err := mqtt.DecodePacketID(h.Type, body); err != nil {
			return err
		}
	case mqtt.SUBSCRIBE:
		c.heard, c.active = true, true
		return c.mqttSubscribe(body)
	case mqtt.UNSUBSCRIBE:
		c.active = true
		return c.mqttUnsubscribe(body)
	case mqtt.PINGREQ:
		c.heard = true
		c.mqttSend(mqtt.AppendPingresp(m.packet[:0]))
	case mqtt.DISCONNECT:
		// [MQTT-3.14.4-3]: a normal disconnect discards the will.
		m.will.Store(nil)
		c.close("Client Closed", true)
		return errMQTTClosed
	case mqtt.CONNECT:
		return fmt.Errorf("%w: a second CONNECT", errMQTTProtocol)
	default:
		return fmt.Errorf("%w: %s from a client", errMQTTProtocol, h.Type)
	}
	return nil
}

// mqttSend queues one of the connection's own packets for its writer,
// woken once the current read is processed.
func (c *conn) mqttSend(pkt []byte) {
	c.mqtt.packet = pkt[:0]
	c.out.appendPacket(pkt)
	c.deferWake(c)
}

// mqttClosed is close's part for an MQTT connection: the client id is
// released and an abnormal close publishes the will, in acc (the
// account the connection was in). It runs on whichever goroutine closed
// the connection; routing from it is as the server's own publish.
func (c *conn) mqttClosed(acc *account, clientID, reason string) {
	if clientID != "" {
		c.srv.mqtt.releaseClientID(c, clientID)
	}
	if p := c.mqtt.pipe.Load(); p != nil {
		p.close()
	}
	if st := c.mqtt.session.Load(); st != nil {
		st.unbind(c)
	}
	if w := c.mqtt.will.Swap(nil); w != nil && acc != nil && c.mqttWillStands(w, reason) {
		c.mqttStoreRetainedWill(acc, w)
		c.srv.routeIn(acc.trie, nil, w.subject, w.subject, nil, -1, w.payload)
	}
}

// mqttWillStands says the will may still go out when the connection
// closes for reason: the server publishes it on the user's behalf, so it
// needs the user's rights as they are now, not as they were at CONNECT.
// A connection closed because its user lost the right to be connected
// (a reload, a revocation, an expiry) publishes nothing, and one whose
// publish rights a reload narrowed publishes only what they still allow.
func (c *conn) mqttWillStands(w *mqttWill, reason string) bool {
	switch reason {
	case errAuthViolation.text, "Authentication Expired", "Authentication Revoked":
		c.log.Warn("mqtt will dropped: the user's authorization ended", "user", c.userName(), "reason", reason)
		return false
	}
	if id := c.authed.Load(); id != nil && id.perms != nil && !id.perms.canPublish(bytesView(w.subject)) {
		c.log.Warn("mqtt will dropped: publish no longer allowed", "user", c.userName(), "subject", string(w.subject))
		return false
	}
	return true
}
