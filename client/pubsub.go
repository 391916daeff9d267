package client

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Publish sends data as an event on subject over core NATS (no stream
// acknowledgement; see Produce for that). ctx is read for the trace to
// continue, not for cancellation: a core publish does not block.
func Publish[T any](ctx context.Context, c *Conn, subject string, data T, opts ...CallOption) error {
	cfg := c.callConfig(opts)
	ev := newEvent(cfg, data)
	msg, err := encodeEvent(ctx, c, subject, &ev, cfg.codec)
	if err != nil {
		return err
	}
	if err := c.nc.PublishMsg(msg); err != nil {
		return fmt.Errorf("client: publish to %q: %w", subject, err)
	}
	return nil
}

// Subscribe calls h with every event on subject (a wildcard is allowed),
// one at a time on the subscription's goroutine. ctx carries the event's
// traceparent. A message that does not decode into T is logged and
// skipped. WithQueue joins a queue group. Unsubscribe or drain the
// returned subscription to stop.
func Subscribe[T any](c *Conn, subject string, h func(ctx context.Context, ev Event[T]), opts ...CallOption) (*nats.Subscription, error) {
	cfg := c.callConfig(opts)
	cb := func(m *nats.Msg) {
		ev, err := decodeEvent[T](m.Subject, m.Header, m.Data, cfg.codec)
		if err != nil {
			c.opts.Logger.Warn("client: dropped undecodable event", "subject", m.Subject, "err", err)
			return
		}
		h(ContextWithTraceParent(context.Background(), ev.TraceParent), ev)
	}
	sub, err := c.nc.QueueSubscribe(subject, cfg.queue, cb)
	if err != nil {
		return nil, fmt.Errorf("client: subscribe to %q: %w", subject, err)
	}
	return sub, nil
}
