package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of a dead-lettered copy, the same whether bus wrote it or a
// worker forwarded it (docs/api.md). Part of the wire format: never
// rename.
const (
	HeaderDLQStream     = "Bus-Dlq-Stream"
	HeaderDLQSubject    = "Bus-Dlq-Subject"
	HeaderDLQSequence   = "Bus-Dlq-Sequence"
	HeaderDLQConsumer   = "Bus-Dlq-Consumer"
	HeaderDLQDeliveries = "Bus-Dlq-Deliveries"
	// HeaderDLQReason is "max_deliveries", "terminated" followed by
	// ": " and the handler's error text when it gave one, or, from bus
	// itself, "refused" (a push delivery no subscriber may receive).
	HeaderDLQReason = "Bus-Dlq-Reason"
)

// Advisory subject prefixes of the reference server, followed by
// ".<stream>.<consumer>".
const (
	advisoryMaxDeliveries = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"
	advisoryTerminated    = "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED"
)

// deadLetters forwards given-up messages to the dead-letter subject on
// servers that do not do it themselves: it hears the consumer's
// max-deliveries and terminated advisories, reads the message back from
// the stream and publishes a copy with the Bus-Dlq-* headers. All workers
// of a consumer join one queue group, so each advisory is forwarded once.
//
// Limits: an advisory is not persisted, so one published while no worker
// is connected is lost, and with it the dead letter; a message gone from
// the stream (work-queue retention, max age) cannot be copied.
type deadLetters struct {
	c    *Conn
	cfg  WorkerConfig
	subs []*nats.Subscription
}

type advisory struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
	Reason     string `json:"reason"`
}

func startDeadLetters(ctx context.Context, c *Conn, cfg WorkerConfig) (*deadLetters, error) {
	d := &deadLetters{c: c, cfg: cfg}
	suffix := "." + cfg.Stream + "." + cfg.Consumer
	queue := "bus-client-dlq" + suffix
	for subject, reason := range map[string]string{
		advisoryMaxDeliveries + suffix: "max_deliveries",
		advisoryTerminated + suffix:    "terminated",
	} {
		sub, err := c.nc.QueueSubscribe(subject, queue, func(m *nats.Msg) { d.forward(reason, m.Data) })
		if err != nil {
			_ = d.stop()
			return nil, fmt.Errorf("client: dead letters of %q: subscribe %q: %w", cfg.Consumer, subject, err)
		}
		d.subs = append(d.subs, sub)
	}
	// The subscriptions must be in place before the first delivery.
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if err := c.nc.FlushWithContext(ctx); err != nil {
		_ = d.stop()
		return nil, fmt.Errorf("client: dead letters of %q: %w", cfg.Consumer, err)
	}
	return d, nil
}

// forward copies the advised message to the dead-letter subject. It runs
// on the subscription's goroutine; failures are logged, as nobody waits
// for them.
func (d *deadLetters) forward(kind string, data []byte) {
	var a advisory
	if err := json.Unmarshal(data, &a); err != nil {
		d.cfg.Logger.Warn("client: unreadable advisory", "consumer", d.cfg.Consumer, "err", err)
		return
	}
	ctx, cancel := d.c.withTimeout(context.Background())
	defer cancel()
	stream, err := d.c.js.Stream(ctx, d.cfg.Stream)
	var msg *jetstream.RawStreamMsg
	if err == nil {
		msg, err = stream.GetMsg(ctx, a.StreamSeq)
	}
	if err != nil {
		d.cfg.Logger.Warn("client: dead letter lost: message not readable", "stream", d.cfg.Stream, "seq", a.StreamSeq, "err", err)
		return
	}
	reason := kind
	if kind == "terminated" && a.Reason != "" {
		reason += ": " + a.Reason
	}
	out := nats.NewMsg(d.cfg.DeadLetterSubject)
	for k, v := range msg.Header {
		// The original publish's expectations (Nats-Expected-Stream and
		// the like) would make the DLQ stream refuse the copy.
		if !strings.HasPrefix(k, "Nats-Expected-") {
			out.Header[k] = v
		}
	}
	out.Header.Set(HeaderDLQStream, d.cfg.Stream)
	out.Header.Set(HeaderDLQSubject, msg.Subject)
	out.Header.Set(HeaderDLQSequence, strconv.FormatUint(a.StreamSeq, 10))
	out.Header.Set(HeaderDLQConsumer, d.cfg.Consumer)
	out.Header.Set(HeaderDLQDeliveries, strconv.FormatUint(a.Deliveries, 10))
	out.Header.Set(HeaderDLQReason, strings.NewReplacer("\r", " ", "\n", " ").Replace(reason))
	out.Data = msg.Data
	if err := d.c.nc.PublishMsg(out); err != nil {
		d.cfg.Logger.Warn("client: dead letter not published", "subject", d.cfg.DeadLetterSubject, "err", err)
	}
}

// stop unsubscribes, letting a forward in progress finish.
func (d *deadLetters) stop() error {
	var errs []error
	for _, sub := range d.subs {
		if err := sub.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
