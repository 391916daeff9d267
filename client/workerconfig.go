package client

import (
	"fmt"
	"log/slog"
	"time"
)

// WorkerConfig declares everything about a worker: its stream, its
// consumer, how many messages it handles at once, how it retries and
// where messages it gives up on go. Only Stream and Consumer are
// required.
type WorkerConfig struct {
	// Stream is the stream to consume.
	Stream string
	// Subjects, if set, make EnsureStream (and Worker.Start) create or
	// update Stream capturing them; if empty, the stream must exist.
	Subjects []string
	// Consumer is the durable consumer's name, shared by every worker
	// process of the same service (they split the messages).
	Consumer string
	// FilterSubject narrows the consumer to part of the stream.
	FilterSubject string

	// Concurrency is how many messages this worker handles at once, and
	// so how many it fetches. Default 1.
	Concurrency int
	// AckWait is how long the server waits for an ack before it delivers
	// the message again (to any worker): it is how fast a crashed
	// worker's messages move on. Default 30 s.
	AckWait time.Duration
	// Heartbeat is how often a running handler tells the server it is
	// still working (+WPI), which restarts the ack wait. Default
	// AckWait/3; negative disables.
	Heartbeat time.Duration
	// FetchWait is how long one pull waits for messages. Default 5 s.
	FetchWait time.Duration

	// Retry decides when a failed message comes back and how many
	// attempts it gets (the consumer's max_deliver).
	Retry RetryPolicy

	// DeadLetterSubject receives a copy of each message the worker gives
	// up on (a Permanent error, or MaxAttempts failures), with Bus-Dlq-*
	// headers saying why. On bus the server publishes it
	// (x_bus_dead_letter_subject); on another server the worker forwards
	// it from the consumer's advisories. Empty: no dead letters.
	DeadLetterSubject string
	// DeadLetterStream, if set with DeadLetterSubject, makes EnsureStream
	// create a stream of that name capturing the dead letters: the DLQ.
	DeadLetterStream string

	// Metrics receives counts and latencies. Default NopMetrics.
	Metrics Metrics
	// Logger reports failures that have no caller to return to (an ack
	// that could not be sent, a fetch error). Default the Conn's.
	Logger *slog.Logger
}

// withDefaults fills in unset fields; c supplies the logger.
func (cfg WorkerConfig) withDefaults(c *Conn) WorkerConfig {
	cfg.Concurrency = max(cfg.Concurrency, 1)
	if cfg.AckWait <= 0 {
		cfg.AckWait = 30 * time.Second
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = cfg.AckWait / 3
	}
	if cfg.FetchWait <= 0 {
		cfg.FetchWait = 5 * time.Second
	}
	cfg.Retry = cfg.Retry.WithDefaults()
	if cfg.Metrics == nil {
		cfg.Metrics = NopMetrics{}
	}
	if cfg.Logger == nil {
		cfg.Logger = c.opts.Logger
	}
	return cfg
}

func (cfg WorkerConfig) validate() error {
	if err := cfg.validateStreams(); err != nil {
		return err
	}
	if cfg.Consumer == "" {
		return fmt.Errorf("client: worker config: Consumer is empty: %w", ErrBadConfig)
	}
	return cfg.Retry.validate()
}

// validateStreams checks what EnsureStream needs.
func (cfg WorkerConfig) validateStreams() error {
	switch {
	case cfg.Stream == "":
		return fmt.Errorf("client: worker config: Stream is empty: %w", ErrBadConfig)
	case cfg.DeadLetterStream != "" && cfg.DeadLetterSubject == "":
		return fmt.Errorf("client: worker config: DeadLetterStream %q without DeadLetterSubject: %w", cfg.DeadLetterStream, ErrBadConfig)
	}
	return nil
}

func (cfg WorkerConfig) labels() Labels { return Labels{Stream: cfg.Stream, Consumer: cfg.Consumer} }
