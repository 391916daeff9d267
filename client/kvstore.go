package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// KVStore is a Store in a JetStream key-value bucket whose TTL is the
// idempotency window. bus and nats-server both have KV buckets (streams
// underneath, README "Key-value buckets and object store"); StreamStore
// does the same in a stream of your own.
type KVStore struct {
	kv jetstream.KeyValue
}

// KVStoreOptions configures a KVStore.
type KVStoreOptions struct {
	Bucket string        // required
	TTL    time.Duration // how long an id is remembered; default 24 h
}

// NewKVStore creates or updates the bucket.
func NewKVStore(ctx context.Context, c *Conn, opts KVStoreOptions) (*KVStore, error) {
	if opts.Bucket == "" {
		return nil, fmt.Errorf("client: kv store: Bucket is empty: %w", ErrBadConfig)
	}
	if opts.TTL <= 0 {
		opts.TTL = 24 * time.Hour
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	kv, err := c.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: opts.Bucket, TTL: opts.TTL})
	if err != nil {
		return nil, fmt.Errorf("client: kv store %q: %w", opts.Bucket, err)
	}
	return &KVStore{kv: kv}, nil
}

// key makes any id a valid key.
func key(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// Seen reports whether the bucket holds the id.
func (s *KVStore) Seen(ctx context.Context, id string) (bool, error) {
	_, err := s.kv.Get(ctx, key(id))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("client: kv store %q: seen %q: %w", s.kv.Bucket(), id, err)
	}
	return true, nil
}

// Record puts the id in the bucket.
func (s *KVStore) Record(ctx context.Context, id string) error {
	if _, err := s.kv.Put(ctx, key(id), nil); err != nil {
		return fmt.Errorf("client: kv store %q: record %q: %w", s.kv.Bucket(), id, err)
	}
	return nil
}
