package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EnsureStream creates or updates the streams cfg declares: Stream with
// cfg.Subjects (skipped when Subjects is empty), and DeadLetterStream
// capturing DeadLetterSubject (when both are set). Both use limits
// retention and file storage; the dead-letter forwarding used on servers
// other than bus reads a given-up message back from the stream, which a
// work-queue stream would already have dropped. Works on any server.
func EnsureStream(ctx context.Context, c *Conn, cfg WorkerConfig) error {
	if err := cfg.validateStreams(); err != nil {
		return err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if len(cfg.Subjects) > 0 {
		sc := jetstream.StreamConfig{Name: cfg.Stream, Subjects: cfg.Subjects, Storage: jetstream.FileStorage}
		if _, err := c.js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("client: ensure stream %q: %w", cfg.Stream, err)
		}
	}
	if cfg.DeadLetterStream != "" {
		sc := jetstream.StreamConfig{Name: cfg.DeadLetterStream, Subjects: []string{cfg.DeadLetterSubject}, Storage: jetstream.FileStorage}
		if _, err := c.js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("client: ensure dead-letter stream %q: %w", cfg.DeadLetterStream, err)
		}
	}
	return nil
}

// EnsureConsumer creates or updates cfg's durable pull consumer: explicit
// acks, cfg.AckWait, max_deliver = Retry.MaxAttempts. On bus (see
// Conn.Server) it also sets x_bus_dead_letter_subject and
// x_bus_backoff_jitter (spreading the redelivery of messages whose
// worker died), so the server itself dead-letters; on another server
// those are left out and Worker forwards dead letters from advisories.
func EnsureConsumer(ctx context.Context, c *Conn, cfg WorkerConfig) (jetstream.Consumer, error) {
	cons, _, err := ensureConsumer(ctx, c, cfg.withDefaults(c))
	return cons, err
}

// busConsumerConfig is a consumer config with bus's extension fields
// (docs/api.md). jetstream.ConsumerConfig has no custom JSON encoding, so
// embedding it puts its fields and ours side by side.
type busConsumerConfig struct {
	jetstream.ConsumerConfig
	DeadLetterSubject string  `json:"x_bus_dead_letter_subject,omitempty"`
	BackOffJitter     float64 `json:"x_bus_backoff_jitter,omitempty"`
}

// ensureConsumer also reports whether the server dead-letters for us.
func ensureConsumer(ctx context.Context, c *Conn, cfg WorkerConfig) (jetstream.Consumer, bool, error) {
	if err := cfg.validate(); err != nil {
		return nil, false, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	info, err := c.Server(ctx)
	if err != nil {
		return nil, false, err
	}
	cc := jetstream.ConsumerConfig{
		Durable:       cfg.Consumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.Retry.MaxAttempts,
		FilterSubject: cfg.FilterSubject,
	}
	serverDLQ := cfg.DeadLetterSubject != "" && info.Has(ExtDeadLetterSubject)
	if !info.IsBus() {
		cons, err := c.js.CreateOrUpdateConsumer(ctx, cfg.Stream, cc)
		if err != nil {
			return nil, false, fmt.Errorf("client: ensure consumer %q on %q: %w", cfg.Consumer, cfg.Stream, err)
		}
		return cons, false, nil
	}
	bc := busConsumerConfig{ConsumerConfig: cc}
	if serverDLQ {
		bc.DeadLetterSubject = cfg.DeadLetterSubject
	}
	if info.Has(ExtBackOffJitter) {
		bc.BackOffJitter = cfg.Retry.Jitter
	}
	if err := createBusConsumer(ctx, c, cfg.Stream, bc); err != nil {
		return nil, false, err
	}
	cons, err := c.js.Consumer(ctx, cfg.Stream, cfg.Consumer)
	if err != nil {
		return nil, false, fmt.Errorf("client: ensure consumer %q on %q: %w", cfg.Consumer, cfg.Stream, err)
	}
	return cons, serverDLQ, nil
}

// createBusConsumer sends the create-or-update request jetstream would,
// with the extension fields it cannot express.
func createBusConsumer(ctx context.Context, c *Conn, stream string, bc busConsumerConfig) error {
	req, err := json.Marshal(struct {
		Stream string            `json:"stream_name"`
		Config busConsumerConfig `json:"config"`
	}{stream, bc})
	if err != nil {
		return fmt.Errorf("client: ensure consumer %q on %q: %w", bc.Durable, stream, err)
	}
	subject := "$JS.API.CONSUMER.CREATE." + stream + "." + bc.Durable
	if bc.FilterSubject != "" {
		subject += "." + bc.FilterSubject
	}
	msg, err := c.nc.RequestWithContext(ctx, subject, req)
	if err != nil {
		return fmt.Errorf("client: ensure consumer %q on %q: %w", bc.Durable, stream, err)
	}
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("client: ensure consumer %q on %q: reply %q: %w", bc.Durable, stream, msg.Data, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("client: ensure consumer %q on %q: %w", bc.Durable, stream, resp.Error)
	}
	return nil
}
