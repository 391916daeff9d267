package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// delivery is one message being handled. Exactly one of ack, NAK or TERM
// is sent for it: by the handler's outcome or by Shutdown giving it back,
// whichever comes first.
type delivery struct {
	msg jetstream.Msg

	mu      sync.Mutex // guards settled, and orders +WPI before the final reply
	settled bool
}

// settle sends the final reply once; it reports whether this call sent it.
func (d *delivery) settle(reply func() error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.settled {
		return false
	}
	d.settled = true
	_ = reply() // a lost reply means a redelivery, which the protocol allows
	return true
}

// progress sends +WPI unless the message is settled; it reports whether
// heartbeats should go on.
func (d *delivery) progress() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.settled {
		return false
	}
	_ = d.msg.InProgress()
	return true
}

// handle runs the handler on d and replies per its outcome.
func (w *Worker[T]) handle(ctx context.Context, d *delivery) {
	l := w.cfg.labels()
	attempt := 1
	if md, err := d.msg.Metadata(); err == nil {
		attempt = int(md.NumDelivered)
	}
	ev, err := decodeEvent[T](d.msg.Subject(), d.msg.Headers(), d.msg.Data(), w.c.opts.Codec)
	if err != nil { // no retry can make it decode: poison
		if d.settle(func() error { return d.msg.TermWithReason(termReason(err)) }) {
			w.cfg.Metrics.Failed(l, 0)
			w.cfg.Metrics.DeadLettered(l, "terminated")
		}
		return
	}
	stop := w.heartbeat(d)
	start := time.Now()
	herr := w.call(ContextWithTraceParent(ctx, ev.TraceParent), ev)
	latency := time.Since(start)
	stop()

	switch {
	case herr == nil:
		if d.settle(d.msg.Ack) {
			w.cfg.Metrics.Processed(l, latency)
		}
	case IsPermanent(herr):
		if d.settle(func() error { return d.msg.TermWithReason(termReason(herr)) }) {
			w.cfg.Metrics.Failed(l, latency)
			w.cfg.Metrics.DeadLettered(l, "terminated")
		}
	case attempt >= w.cfg.Retry.MaxAttempts:
		// No delay: the server sees max_deliver reached at once and
		// dead-letters (bus) or advises (others).
		if d.settle(d.msg.Nak) {
			w.cfg.Metrics.Failed(l, latency)
			w.cfg.Metrics.DeadLettered(l, "max_deliveries")
		}
	default:
		delay := w.cfg.Retry.Delay(attempt, rand.Float64())
		if d.settle(func() error { return d.msg.NakWithDelay(delay) }) {
			w.cfg.Metrics.Failed(l, latency)
			w.cfg.Metrics.Retried(l, delay)
		}
	}
}

// call runs the handler, turning a panic into an error so one bad
// message does not take the process down.
func (w *Worker[T]) call(ctx context.Context, ev Event[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("client: handler panicked: %v", r)
		}
	}()
	return w.h(ctx, ev)
}

// termReason is err's text on one line, as +TERM carries it.
func termReason(err error) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(err.Error())
}
