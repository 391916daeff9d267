package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/bus-dev/bus/server/mqtt"
)

// A connection's QoS 1 stores in flight. The reader hands each QoS 1
// message to $MQTT_msgs's capture without waiting (so a window of them
// shares the stream's group commit: one fsync), and the PUBACKs go out
// as the stores are acknowledged, in the order the PUBLISH packets came
// ([MQTT-4.6.0-2]), from the goroutine that delivers the pub ack. A
// store that fails closes the connection with its PUBACK and every later
// one unsent, so the client sends them again.
//
// At most mqttMaxInflight stores are in flight; the reader waits for
// room (backpressure on the client), and closes the connection when
// none comes within js_api_timeout.

// mqttMaxInflight bounds a connection's QoS 1 stores in flight (the
// reference's pipeline window).
const mqttMaxInflight = 1024

// mqttAckPipe is a connection's QoS 1 PUBACKs awaiting their stores.
// Safe for concurrent use.
type mqttAckPipe struct {
	c      *conn
	js     *mqttJS
	prefix string        // the stores' reply subjects: prefix + entry id
	sub    *subscription // on prefix + "*"
	room   chan struct{} // a token per store in flight

	unsubscribe sync.Once

	mu      sync.Mutex // guards the fields below; mqttStored.mu may be taken under it
	closed  bool
	head    uint64         // the id of entries[0]
	entries []mqttAckEntry // PUBACKs not yet sent, in packet order
	packets []byte         // scratch: the PUBACKs a completion sends
}

// mqttAckEntry is one PUBACK waiting, with what its store's failure
// undoes (the digest that recognizes a resend, mqttqos.go).
type mqttAckEntry struct {
	pi     uint16
	done   bool
	err    error
	st     *mqttStored
	digest uint64
}

// mqttPipe is the connection's pipe, made on its first QoS 1 store.
// Reader goroutine only.
func (c *conn) mqttPipe(j *mqttJS) (*mqttAckPipe, error) {
	if p := c.mqtt.pipe.Load(); p != nil {
		return p, nil
	}
	p := &mqttAckPipe{c: c, js: j, prefix: mqttJSAPrefix + mqttToken() + ".MS.", room: make(chan struct{}, mqttMaxInflight)}
	p.sub = &subscription{subject: p.prefix + "*", handler: p.reply}
	if _, err := c.srv.subscribeIn(j.acc, p.sub); err != nil {
		return nil, err
	}
	c.mqtt.pipe.Store(p)
	if c.closing.Load() {
		p.close() // close ran before the pipe was there to see
	}
	return p, nil
}

// store hands a QoS 1 message to the stream and queues its PUBACK
// behind those before it. Reader goroutine only.
func (p *mqttAckPipe) store(st *mqttStored, subject string, hdr int, msg []byte, pi uint16, digest uint64) error {
	t := time.NewTimer(p.js.timeout)
	defer t.Stop()
	select {
	case p.room <- struct{}{}:
	case <-t.C:
		return fmt.Errorf("%w: %d stores unanswered for %v", errMQTTStore, mqttMaxInflight, p.js.timeout)
	case <-p.c.srv.quit:
		return errConnClosed
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.room
		return errConnClosed
	}
	id := p.head + uint64(len(p.entries))
	p.entries = append(p.entries, mqttAckEntry{pi: pi, st: st, digest: digest})
	p.mu.Unlock()
	// Marked now, not once stored, so a resend arriving before the pub
	// ack is recognized (and forgotten again if the store fails).
	st.markPublished(pi, digest)
	if p.c.srv.localPublishIn(p.js.acc, fullRights, subject, p.prefix+strconv.FormatUint(id, 10), hdr, msg) == 0 {
		p.complete(id, fmt.Errorf("%w: nothing stores %s (is the %s stream gone?)", errMQTTStore, subject, mqttMsgsStream))
	}
	return nil
}

// ack queues a PUBACK with no store behind it (a publish dropped by the
// rules, a resend stored already), in order with those that have one.
func (p *mqttAckPipe) ack(pi uint16) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.entries = append(p.entries, mqttAckEntry{pi: pi, done: true})
	id := p.head + uint64(len(p.entries)) - 1
	p.mu.Unlock()
	p.flush(id, nil, false)
}

// drain waits until every store in flight is answered (before a packet
// whose answer must not overtake their PUBACKs).
func (p *mqttAckPipe) drain() error {
	t := time.NewTimer(p.js.timeout)
	defer t.Stop()
	for n := 0; n < cap(p.room); n++ {
		select {
		case p.room <- struct{}{}:
		case <-t.C:
			for ; n > 0; n-- {
				<-p.room
			}
			return fmt.Errorf("%w: stores unanswered for %v", errMQTTStore, p.js.timeout)
		}
	}
	for range cap(p.room) {
		<-p.room
	}
	return nil
}

// reply is the handler of the stores' pub acks.
func (p *mqttAckPipe) reply(subject, _ []byte, hdr int, msg []byte) bool {
	id, err := strconv.ParseUint(string(subject[len(p.prefix):]), 10, 64)
	if err != nil {
		return false
	}
	if hdr >= 0 {
		msg = msg[hdr:]
	}
	var ack struct {
		Error *jsAPIError `json:"error"`
	}
	if err := json.Unmarshal(msg, &ack); err != nil {
		p.complete(id, fmt.Errorf("%w: bad pub ack %q", errMQTTStore, msg))
	} else if ack.Error != nil {
		p.complete(id, fmt.Errorf("%w: %w", errMQTTStore, ack.Error))
	} else {
		p.complete(id, nil)
	}
	return true
}

// complete records store id's outcome and frees its room.
func (p *mqttAckPipe) complete(id uint64, err error) {
	p.flush(id, err, true)
}

// flush marks entry id done (with err), sends the PUBACKs now at the
// head in order, and closes the connection at the first failed store. A
// failed store's digest is forgotten, so that its resend is stored.
func (p *mqttAckPipe) flush(id uint64, err error, stored bool) {
	if stored {
		<-p.room // never blocks: the store took a token
	}
	p.mu.Lock()
	if id < p.head || id-p.head >= uint64(len(p.entries)) {
		p.mu.Unlock()
		return
	}
	e := &p.entries[id-p.head]
	e.done, e.err = true, err
	if err != nil && e.st != nil {
		e.st.unmarkPublished(e.pi, e.digest)
	}
	out := p.packets[:0]
	var failed error
	n := 0
	for ; n < len(p.entries) && p.entries[n].done; n++ {
		if e := p.entries[n]; e.err != nil && !p.closed {
			failed = e.err
			p.closed = true
		}
		if !p.closed {
			out = mqtt.AppendAck(out, mqtt.PUBACK, p.entries[n].pi)
		}
	}
	p.entries = p.entries[n:]
	p.head += uint64(n)
	if len(out) > 0 {
		p.c.out.appendPacket(out)
	}
	p.packets = out[:0]
	p.mu.Unlock()
	if len(out) > 0 {
		p.c.out.signal()
	}
	if failed != nil {
		p.c.log.Warn("mqtt store failed", "err", failed)
		p.c.close("Store Failed: "+failed.Error(), true)
	}
}

// close stops the pipe as its connection closes: what is in flight
// completes unsent (the client sends it again).
func (p *mqttAckPipe) close() {
	p.mu.Lock()
	p.closed = true // the entries stay, for their stores' outcomes
	p.mu.Unlock()
	p.unsubscribe.Do(func() { p.c.srv.unsubscribeIn(p.js.acc, p.sub) })
}
