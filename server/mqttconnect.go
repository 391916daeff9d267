package server

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
)

// CONNECT: the reference's checks and CONNACK codes, in its order. A
// refusal is a CONNACK with the code, after which the connection closes;
// a malformed CONNECT closes it without one.
//
//   - protocol level other than 4: 0x01;
//   - an empty client id without clean session, or one with characters
//     NATS names may not hold (whitespace, '.', '*', '>'): 0x02; an
//     empty one with clean session gets a generated id;
//   - a will at QoS 2 with reject_qos2_publish: 0x10 (the reference's);
//   - an empty user name: 0x04;
//   - credentials the authenticator refuses (the user name and password
//     are a user's; the password alone is also tried as a token), or a
//     user whose allowed_connection_types leave out MQTT: 0x05;
//   - clean session 0 or a retained will in an account without
//     JetStream, and a session that JetStream could not open
//     (docs/mqtt.md): 0x03, server unavailable, with the reason logged;
//     a stored session of another client id with the same hash: 0x02.

// mqttProtocolName is CONNECT's protocol name, with its length.
var mqttProtocolName = []byte("\x00\x04MQTT")

// mqttConnect handles the CONNECT packet.
func (c *conn) mqttConnect(body []byte) error {
	var p mqtt.Connect
	err := mqtt.DecodeConnect(body, &p)
	// Another protocol name (MQTT 3.1's "MQIsdp") closes without a
	// CONNACK, as in the reference; MQTT at another level gets 0x01.
	if (errors.Is(err, mqtt.ErrUnsupported) || p.Level == mqtt.ProtocolLevel5) && bytes.HasPrefix(body, mqttProtocolName) {
		// MQTT 5's codec is in (server/mqtt), its session rules not yet:
		// a level 5 client is refused as the reference refuses it.
		return c.mqttRefuse(mqtt.ConnBadProtocolLevel, fmt.Sprintf("protocol level %d", p.Level))
	}
	if err != nil {
		return err
	}
	if !c.stopAuthTimer() {
		return errConnClosed // the auth timeout fired first and is closing
	}
	id := string(p.ClientID)
	if id == "" {
		if !p.CleanSession {
			return c.mqttRefuse(mqtt.ConnIdentifierRejected, "empty client id without clean session")
		}
		id = newMQTTClientID()
	}
	if strings.ContainsAny(id, " \t\r\n\f.*>") {
		return c.mqttRefuse(mqtt.ConnIdentifierRejected, fmt.Sprintf("invalid character in client id %q", id))
	}
	var will *mqttWill
	if p.HasWill {
		subject, err := mqtt.TopicToSubject(nil, p.WillTopic)
		if err != nil {
			return fmt.Errorf("%w: will topic: %w", errMQTTProtocol, err)
		}
		if p.WillQoS == 2 && c.mqtt.rejectQoS2 {
			return c.mqttRefuse(mqtt.ConnQoS2WillRejected, "QoS 2 will with reject_qos2_publish")
		}
		will = &mqttWill{subject: subject, payload: append([]byte(nil), p.WillMessage...)}
		if p.WillRetain {
			will.key = string(subject)
			will.retained = &mqttRetainedRecord{topic: string(p.WillTopic), flags: p.WillQoS<<1 | 1, payload: will.payload}
		}
	}
	if p.HasUsername && len(p.Username) == 0 {
		return c.mqttRefuse(mqtt.ConnBadUserOrPassword, "empty user name")
	}
	d := clientDesc{user: string(p.Username), mqttClient: id}
	if d.user == "" && p.HasPassword {
		d.user = "[REDACTED]" // as a token user is shown
	}
	c.connectedMonitor(d)
	pass := string(p.Password)
	if err := c.authenticate(&connectOptions{credentials: credentials{User: string(p.Username), Pass: pass, Token: pass}}); err != nil {
		if errors.Is(err, errAuthViolation) {
			return c.mqttRefuse(mqtt.ConnNotAuthorized, errAuthViolation.text)
		}
		return c.mqttRefuse(mqtt.ConnServerUnavailable, err.Error())
	}
	switch {
	case !p.CleanSession && !c.srv.mqttHasJetStream(c.acc):
		return c.mqttRefuse(mqtt.ConnServerUnavailable, "persistent sessions (clean session 0) need JetStream in the account")
	case p.HasWill && p.WillRetain && !c.srv.jetStreamIn(c.acc):
		return c.mqttRefuse(mqtt.ConnServerUnavailable, "retained wills need JetStream in the account")
	}
	if will != nil {
		will = c.mqttAllowedWill(will)
	}
	old, jailed := c.srv.mqtt.takeClientID(c, id, time.Now())
	if jailed {
		c.log.Warn("mqtt client id taken over within a second: holding the new connection, then closing it", "client_id", id)
		t := time.NewTimer(mqttFlapJail)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.srv.quit:
		}
		c.close("Duplicate Client ID", false)
		return errMQTTClosed
	}
	if old != nil {
		old.mqtt.will.Store(nil)
		c.log.Warn("mqtt client id taken over: closing the older connection", "client_id", id, "old_cid", old.id)
		old.close("Duplicate Client ID", true)
	}
	st, present, err := c.mqttOpenSession(id, p.CleanSession)
	switch {
	case errors.Is(err, errMQTTSessionCollision):
		return c.mqttRefuse(mqtt.ConnIdentifierRejected, err.Error())
	case err != nil:
		return c.mqttRefuse(mqtt.ConnServerUnavailable, err.Error())
	}
	c.mqtt.will.Store(will)
	c.mqtt.connected = true
	c.connected = true
	if p.KeepAlive > 0 {
		c.mqtt.keepAlive = time.Duration(p.KeepAlive) * 3 * time.Second / 2
	}
	c.announceConnect()
	c.mqttSend(mqtt.AppendConnack(c.mqtt.packet[:0], present, mqtt.ConnAccepted))
	c.log.Debug("mqtt client connect", "client_id", id, "keepalive", p.KeepAlive, "session_present", present)
	if present {
		c.mqttRestoreSession(st)
	}
	return nil
}

// mqttOpenSession opens the JetStream-kept session of client id, when
// the account has JetStream: a persistent one is resumed or made, a
// clean one discards what was stored under the id. Without JetStream
// the connection has no session (QoS 0 only).
func (c *conn) mqttOpenSession(id string, clean bool) (*mqttStored, bool, error) {
	if !c.srv.mqttHasJetStream(c.acc) {
		return nil, false, nil
	}
	st, present, err := c.srv.mqtt.mqttJSFor(c.srv, c.acc).openSession(c, id, clean)
	if err != nil {
		return nil, false, err
	}
	c.mqtt.session.Store(st)
	return st, present, nil
}

// mqttAllowedWill is the will as it will be routed: through the
// account's mappings, and nil when the user may not publish there (it
// would be refused as a PUBLISH to that topic would).
func (c *conn) mqttAllowedWill(w *mqttWill) *mqttWill {
	subject := w.subject
	if m := c.acc.mapper; m != nil {
		subject = append([]byte(nil), m.apply(subject)...)
	}
	if len(subject) == 0 || reservedPublish(subject) || c.pubPerms != nil && !c.pubPerms.canPublish(bytesView(subject)) {
		c.log.Warn("mqtt will dropped: publish not allowed", "user", c.userName(), "subject", string(subject))
		return nil
	}
	w.subject = subject
	return w
}

// mqttRefuse answers CONNECT with a refusing CONNACK and closes the
// connection once it is written.
func (c *conn) mqttRefuse(code byte, why string) error {
	if code == mqtt.ConnNotAuthorized {
		c.srv.authFailures.Add(1)
	}
	c.log.Warn("mqtt connect refused", "code", code, "reason", why)
	c.mu.Lock()
	if c.reason == "" {
		c.reason = why
	}
	c.mu.Unlock()
	c.out.appendLastPacket(mqtt.AppendConnack(nil, false, code))
	c.close(why, true)
	return errMQTTClosed
}

// newMQTTClientID is the client id of a client that sent none.
func newMQTTClientID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "bus" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}
