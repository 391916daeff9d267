package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// An MQTT session that JetStream keeps: its subscriptions with their
// QoS, the consumers of its QoS 1 subscriptions, and, while bus runs,
// the QoS 1 deliveries it has not acknowledged (their packet ids). The
// record in $MQTT_sess is the reference's JSON:
//
//	{"origin":"<server>","id":"<client id>","clean":false,
//	 "subs":{"<filter>":<qos>,…},
//	 "cons":{"<sid>":<consumer config>,…}}
//
// at $MQTT.sess.<hash of the client id>, the stream keeping only the
// last per subject. A persistent session (clean session 0) is saved at
// CONNECT and whenever its subscriptions change; a clean one only once
// it has consumers (so the next CONNECT with the id can remove what a
// crash left), and it is removed, consumers and record, when its
// connection closes.

// mqttSessionRecord is the stored session (a wire format).
type mqttSessionRecord struct {
	Origin string                         `json:"origin,omitempty"`
	ID     string                         `json:"id,omitempty"`
	Clean  bool                           `json:"clean,omitempty"`
	Subs   map[string]byte                `json:"subs,omitempty"`
	Cons   map[string]*mqttConsumerConfig `json:"cons,omitempty"`
}

// errMQTTSessionCollision is a stored session of another client id with
// the same hash: CONNACK 0x02, as the reference.
var errMQTTSessionCollision = errors.New("mqtt: stored session does not match the client id")

// mqttStored is a session's state. Safe for concurrent use: the bound
// connection's reader, the consumers' deliveries and a close meet here.
type mqttStored struct {
	js   *mqttJS
	id   string
	hash string

	mu sync.Mutex // guards the fields below; taken alone or under mqttAckPipe.mu
	// conn is the connection the session is bound to, nil while offline.
	conn  *conn
	clean bool
	seq   uint64 // the record's sequence in $MQTT_sess, 0 for none
	subs  map[string]byte
	cons  map[string]*mqttConsumerConfig // by sid (the filter, or filter+" fwc")
	// deliver are the live subscriptions on the consumers' deliver
	// subjects, by sid, while the session is bound.
	deliver map[string]*subscription
	// pending are the QoS 1 deliveries sent and not acknowledged, by
	// packet id; bySeq finds a redelivery's packet id by its consumer
	// and stream sequence, so it goes out again under the same id.
	pending map[uint16]mqttPending
	bySeq   map[string]map[uint64]uint16
	lastPI  uint16
	maxAcks int
	// published are the client's QoS 1 publishes stored, by packet id:
	// a digest of topic and payload, so that a resent one (DUP) is
	// acknowledged without being stored twice.
	published map[uint16]uint64
	// received are the client's QoS 2 packet ids stored and awaiting
	// their PUBREL.
	received map[uint16]struct{}
}

// mqttPending is a QoS 1 delivery awaiting its PUBACK.
type mqttPending struct {
	durable string
	seq     uint64
	ack     string // the JetStream ack subject
}

func newMQTTStored(j *mqttJS, id string) *mqttStored {
	return &mqttStored{js: j, id: id, hash: mqttHash(id), maxAcks: j.s.opts.MQTT.maxAckPending()}
}

// recordSubject is where the session's record is kept.
func (st *mqttStored) recordSubject() string { return mqttSessPrefix + st.hash }

// openSession finds or loads the session of client id for c, discarding
// it when clean is asked or it was clean, and binds it to c. present
// says a persistent session was resumed (CONNACK's session present).
func (j *mqttJS) openSession(c *conn, id string, clean bool) (st *mqttStored, present bool, err error) {
	j.mu.Lock()
	st = j.sessions[id]
	j.mu.Unlock()
	if st == nil {
		if st, err = j.loadSession(id); err != nil {
			return nil, false, err
		}
	}
	st.mu.Lock()
	existed := st.seq != 0 || len(st.subs) > 0
	wasClean := st.clean
	st.mu.Unlock()
	if existed && (clean || wasClean) {
		if err := st.discard(); err != nil {
			return nil, false, err
		}
		existed = false
	}
	st.mu.Lock()
	st.conn, st.clean = c, clean
	st.mu.Unlock()
	j.mu.Lock()
	j.sessions[id] = st
	j.mu.Unlock()
	if !clean {
		if err := st.save(); err != nil {
			return nil, false, err
		}
	}
	return st, existed && !clean, nil
}

// loadSession reads client id's record, or makes an empty session when
// there is none.
func (j *mqttJS) loadSession(id string) (*mqttStored, error) {
	st := newMQTTStored(j, id)
	msg, ok, err := j.lastFor(mqttSessStream, st.recordSubject())
	if err != nil || !ok {
		return st, err
	}
	var rec mqttSessionRecord
	if err := json.Unmarshal(msg.Data, &rec); err != nil {
		return nil, fmt.Errorf("mqtt: session record at %d: %w", msg.Seq, err)
	}
	if rec.ID != id {
		return nil, errMQTTSessionCollision
	}
	st.seq, st.clean, st.subs, st.cons = msg.Seq, rec.Clean, rec.Subs, rec.Cons
	for sid, cc := range st.cons {
		if cc == nil {
			delete(st.cons, sid)
		}
	}
	return st, nil
}

// save stores the session's record; the stream keeps only the last.
func (st *mqttStored) save() error {
	st.mu.Lock()
	rec := mqttSessionRecord{Origin: st.js.s.name, ID: st.id, Clean: st.clean, Subs: st.subs, Cons: st.cons}
	b, err := json.Marshal(&rec)
	st.mu.Unlock()
	if err != nil {
		return err
	}
	if err := st.js.ensureStreams(); err != nil {
		return err
	}
	seq, err := st.js.store(st.recordSubject(), nil, b)
	if err != nil {
		return fmt.Errorf("mqtt: save session %q: %w", st.id, err)
	}
	st.mu.Lock()
	st.seq = seq
	st.mu.Unlock()
	return nil
}

// discard removes the session's consumers and record and empties it
// ([MQTT-3.1.2-6]: a clean session reuses nothing of an earlier one).
func (st *mqttStored) discard() error {
	st.mu.Lock()
	cons, seq := st.cons, st.seq
	st.subs, st.cons, st.seq = nil, nil, 0
	st.pending, st.bySeq, st.published, st.received, st.lastPI = nil, nil, nil, nil, 0
	st.mu.Unlock()
	for _, cc := range cons {
		if err := st.js.deleteConsumer(cc.Durable); err != nil {
			return fmt.Errorf("mqtt: session %q: %w", st.id, err)
		}
	}
	if seq != 0 {
		return st.js.deleteMsg(mqttSessStream, seq)
	}
	return nil
}

// unbind detaches c from the session as it closes: the consumers stop
// delivering (their deliver subjects lose interest). A clean session
// is forgotten and its storage removed, on a goroutine of the server's
// (close may run where a JetStream request must not wait).
func (st *mqttStored) unbind(c *conn) {
	st.mu.Lock()
	if st.conn != c {
		st.mu.Unlock()
		return // taken over: the session is the newer connection's
	}
	st.conn = nil
	deliver := st.deliver
	st.deliver = nil
	clean := st.clean
	st.mu.Unlock()
	for _, sub := range deliver {
		st.js.s.unsubscribeIn(st.js.acc, sub)
	}
	if !clean {
		return
	}
	j := st.js
	j.mu.Lock()
	if j.sessions[st.id] == st {
		delete(j.sessions, st.id)
	}
	j.mu.Unlock()
	st.mu.Lock()
	stored := st.seq != 0 || len(st.cons) > 0
	st.mu.Unlock()
	if !stored {
		return
	}
	s := j.s
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := st.discard(); err != nil {
			s.log.Warn("mqtt clean session not removed", "client_id", st.id, "err", err)
		}
	}()
}

// nextPI is a free packet id for a delivery, 0 when every one is taken
// or max_ack_pending is reached. Ids go round rather than reuse the one
// just freed, so a client does not take a new message for a resent one
// ([MQTT-2.3.1-4]). st.mu held.
func (st *mqttStored) nextPI() uint16 {
	if len(st.pending) >= st.maxAcks {
		return 0
	}
	for range 0xffff {
		st.lastPI++
		if st.lastPI == 0 {
			st.lastPI = 1
		}
		if _, used := st.pending[st.lastPI]; !used {
			return st.lastPI
		}
	}
	return 0
}

// track records a delivery of the stream message that ack acknowledges
// and returns its packet id (the same for a redelivery) and whether it
// is a redelivery (DUP); pi is 0 when it cannot go out now (JetStream
// sends it again after ack_wait). st.mu held.
func (st *mqttStored) track(durable, ack string) (pi uint16, dup bool) {
	seq, delivered, ok := parseAckSubject(ack)
	if !ok {
		return 0, false
	}
	if st.bySeq == nil {
		st.bySeq = map[string]map[uint64]uint16{}
		st.pending = map[uint16]mqttPending{}
	}
	seqs := st.bySeq[durable]
	if seqs == nil {
		seqs = map[uint64]uint16{}
		st.bySeq[durable] = seqs
	}
	if pi = seqs[seq]; pi == 0 {
		if pi = st.nextPI(); pi == 0 {
			return 0, false
		}
		seqs[seq] = pi
	}
	st.pending[pi] = mqttPending{durable: durable, seq: seq, ack: ack}
	return pi, delivered > 1
}

// acked forgets the delivery with packet id pi and returns its ack
// subject ("" for an id not pending).
func (st *mqttStored) acked(pi uint16) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.pending[pi]
	if !ok {
		return ""
	}
	delete(st.pending, pi)
	delete(st.bySeq[p.durable], p.seq)
	return p.ack
}

// forgetConsumer drops what is pending of durable's deliveries. st.mu held.
func (st *mqttStored) forgetConsumer(durable string) {
	for _, pi := range st.bySeq[durable] {
		delete(st.pending, pi)
	}
	delete(st.bySeq, durable)
}

// parseAckSubject reads the stream sequence and delivery count of a
// JetStream ack subject, in either form (server/jetstream/ackformat.go).
func parseAckSubject(ack string) (seq, delivered uint64, ok bool) {
	var tokens [12]string
	n := 0
	start := 0
	for i := 0; i <= len(ack) && n < len(tokens); i++ {
		if i == len(ack) || ack[i] == '.' {
			tokens[n] = ack[start:i]
			n++
			start = i + 1
		}
	}
	var d, s string
	switch {
	case n == 9:
		d, s = tokens[4], tokens[5]
	case n >= 11:
		d, s = tokens[6], tokens[7]
	default:
		return 0, 0, false
	}
	delivered, err1 := strconv.ParseUint(d, 10, 64)
	seq, err2 := strconv.ParseUint(s, 10, 64)
	return seq, delivered, err1 == nil && err2 == nil
}
