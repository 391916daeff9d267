package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamStore is a Store kept in a JetStream stream, so every process of
// a service shares it and it survives restarts. Each id is one subject
// (<prefix>.<id in base64url>) holding at most one message; the stream's
// max age is the TTL, so the server forgets ids by itself. Seen is a
// last-by-subject message get. It works on bus and on nats-server alike,
// as KVStore does in a key-value bucket.
type StreamStore struct {
	c      *Conn
	st     jetstream.Stream
	stream string
	prefix string
}

// StreamStoreOptions configures a StreamStore.
type StreamStoreOptions struct {
	// Stream names the stream; required.
	Stream string
	// Prefix of the id subjects. Default "idem." + Stream.
	Prefix string
	// TTL is how long an id is remembered (the stream's max age).
	// Default 24 h.
	TTL time.Duration
}

// NewStreamStore creates or updates the store's stream.
func NewStreamStore(ctx context.Context, c *Conn, opts StreamStoreOptions) (*StreamStore, error) {
	if opts.Stream == "" {
		return nil, fmt.Errorf("client: stream store: Stream is empty: %w", ErrBadConfig)
	}
	if opts.Prefix == "" {
		opts.Prefix = "idem." + opts.Stream
	}
	if opts.TTL <= 0 {
		opts.TTL = 24 * time.Hour
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	st, err := c.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              opts.Stream,
		Subjects:          []string{opts.Prefix + ".>"},
		MaxMsgsPerSubject: 1,
		MaxAge:            opts.TTL,
		Storage:           jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("client: stream store %q: %w", opts.Stream, err)
	}
	return &StreamStore{c: c, st: st, stream: opts.Stream, prefix: opts.Prefix}, nil
}

func (s *StreamStore) subject(id string) string {
	return s.prefix + "." + base64.RawURLEncoding.EncodeToString([]byte(id))
}

// Seen reports whether the id's subject holds a message.
func (s *StreamStore) Seen(ctx context.Context, id string) (bool, error) {
	ctx, cancel := s.c.withTimeout(ctx)
	defer cancel()
	_, err := s.st.GetLastMsgForSubject(ctx, s.subject(id))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("client: stream store %q: seen %q: %w", s.stream, id, err)
	}
	return true, nil
}

// Record stores an empty message on the id's subject and waits for the
// stream's ack.
func (s *StreamStore) Record(ctx context.Context, id string) error {
	ctx, cancel := s.c.withTimeout(ctx)
	defer cancel()
	if _, err := s.c.js.Publish(ctx, s.subject(id), nil, jetstream.WithExpectStream(s.stream)); err != nil {
		return fmt.Errorf("client: stream store %q: record %q: %w", s.stream, id, err)
	}
	return nil
}
