package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ProducerOptions configures a Producer. The zero value works.
type ProducerOptions struct {
	// Retry spaces the attempts of one Produce call. Default
	// DefaultRetryPolicy (5 attempts, 1 s doubling, ±20%).
	Retry RetryPolicy
	// AttemptTimeout bounds one attempt's wait for the stream's ack.
	// Default the Conn's Timeout.
	AttemptTimeout time.Duration
	// Stream, if set, is the stream the subject must land in
	// (Nats-Expected-Stream); a publish captured by another stream fails
	// instead of being stored there. The header stays on the stored
	// message: bus's own dead-letter copy keeps it today, so a DLQ
	// stream refuses that copy; leave Stream empty for streams whose
	// workers dead-letter on bus.
	Stream string
}

// Producer publishes events to streams and waits for them to be stored,
// retrying on timeouts with the same Nats-Msg-Id, so a retry whose first
// attempt was in fact stored is recognised as a duplicate and stored
// once (within the stream's duplicate window, 2 min by default). It is
// safe for concurrent use.
type Producer struct {
	c    *Conn
	pub  publisher
	opts ProducerOptions
}

// publisher is the part of jetstream.JetStream a Producer uses; tests
// replace it to inject timeouts.
type publisher interface {
	PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)
}

// NewProducer returns a producer over c. It does no I/O.
func NewProducer(c *Conn, opts ProducerOptions) (*Producer, error) {
	opts.Retry = opts.Retry.WithDefaults()
	if err := opts.Retry.validate(); err != nil {
		return nil, err
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = c.opts.Timeout
	}
	return &Producer{c: c, pub: c.js, opts: opts}, nil
}

// PubAck is a stored event.
type PubAck struct {
	ID       string // the event id, also its Nats-Msg-Id
	Stream   string
	Seq      uint64
	Attempts int // publishes sent, 1 unless a timeout was retried
	// Duplicate: the stream already held this id (from an earlier
	// attempt of this call or an earlier publish of the same id) and did
	// not store it again. Seq is then the stored copy's.
	Duplicate bool
}

// Produce publishes data as an event on subject and waits until a stream
// has stored it, retrying per the producer's policy while the answer is
// a timeout or "no responders" (the stream is not reachable yet). Other
// errors, such as a stream refusing the message, end at once. ctx bounds
// the whole call, back-offs included.
func Produce[T any](ctx context.Context, p *Producer, subject string, data T, opts ...CallOption) (PubAck, error) {
	cfg := p.c.callConfig(opts)
	ev := newEvent(cfg, data)
	msg, err := encodeEvent(ctx, p.c, subject, &ev, cfg.codec)
	if err != nil {
		return PubAck{}, err
	}
	pubOpts := []jetstream.PublishOpt{jetstream.WithMsgID(ev.ID), jetstream.WithRetryAttempts(0)}
	if p.opts.Stream != "" {
		pubOpts = append(pubOpts, jetstream.WithExpectStream(p.opts.Stream))
	}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, p.opts.AttemptTimeout)
		ack, err := p.pub.PublishMsg(actx, msg, pubOpts...)
		cancel()
		if err == nil {
			return PubAck{ID: ev.ID, Stream: ack.Stream, Seq: ack.Sequence, Attempts: attempt, Duplicate: ack.Duplicate}, nil
		}
		if ctx.Err() != nil || !retryablePublish(err) || attempt >= p.opts.Retry.MaxAttempts {
			return PubAck{}, fmt.Errorf("client: produce %q (id %q) after %d attempts: %w", subject, ev.ID, attempt, err)
		}
		if err := wait(ctx, p.opts.Retry.Delay(attempt, rand.Float64())); err != nil {
			return PubAck{}, fmt.Errorf("client: produce %q (id %q) after %d attempts: %w", subject, ev.ID, attempt, err)
		}
	}
}

// retryablePublish reports whether a publish may have failed only for
// want of time or of a stream leader: a retry can succeed.
func retryablePublish(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoStreamResponse)
}

// wait sleeps for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
