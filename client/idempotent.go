package client

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Store remembers which event ids have been processed, for a TTL. It must
// be safe for concurrent use. MemoryStore, StreamStore and KVStore
// implement it; a database table written in the same transaction as the
// handler's side effect is the strongest implementation of all.
type Store interface {
	// Seen reports whether id was recorded and has not expired.
	Seen(ctx context.Context, id string) (bool, error)
	// Record marks id as processed.
	Record(ctx context.Context, id string) error
}

// Idempotent wraps h so that an event whose id the store has seen is
// acked without running h again. After h succeeds the id is recorded,
// and only then does the worker ack.
//
// What it guarantees: a redelivery that arrives after the record was
// written is skipped. That covers duplicate publishes that the stream's
// duplicate window missed (the same event id published twice), an ack
// lost on the way to the server, and a worker that died after recording.
//
// What it cannot: the side effect and the record are two writes, so a
// crash after h's side effect but before Record returns means h runs
// again for that event. Two copies of one event handled at the same time
// (by two workers) may both run h, since neither is recorded yet. Both
// windows close only when the handler writes the id in the same
// transaction as its side effect, with its own Store. Events without an
// id are always handled. A failing Seen or Record is returned as the
// handler's error, so the event is retried.
func Idempotent[T any](store Store, h Handler[T]) Handler[T] {
	return func(ctx context.Context, ev Event[T]) error {
		if ev.ID == "" {
			return h(ctx, ev)
		}
		seen, err := store.Seen(ctx, ev.ID)
		if err != nil {
			return fmt.Errorf("client: idempotency check of %q: %w", ev.ID, err)
		}
		if seen {
			return nil
		}
		if err := h(ctx, ev); err != nil {
			return err
		}
		if err := store.Record(ctx, ev.ID); err != nil {
			return fmt.Errorf("client: idempotency record of %q: %w", ev.ID, err)
		}
		return nil
	}
}

// MemoryStore is a Store in this process's memory: it forgets on restart
// and is not shared between processes, so it suits tests and
// single-process services. Create it with NewMemoryStore.
type MemoryStore struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex           // guards seen
	seen map[string]time.Time // id → when it expires
}

// MemoryStoreOptions configures a MemoryStore.
type MemoryStoreOptions struct {
	TTL time.Duration    // how long an id is remembered; default 24 h
	Now func() time.Time // the clock; default time.Now
}

// NewMemoryStore returns an empty store.
func NewMemoryStore(opts MemoryStoreOptions) *MemoryStore {
	if opts.TTL <= 0 {
		opts.TTL = 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &MemoryStore{ttl: opts.TTL, now: opts.Now, seen: make(map[string]time.Time)}
}

// Seen reports whether id was recorded less than TTL ago.
func (s *MemoryStore) Seen(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.seen[id]
	if ok && !s.now().Before(exp) {
		delete(s.seen, id)
		return false, nil
	}
	return ok, nil
}

// Record remembers id for TTL. Expired ids are swept as records come in,
// so memory follows the ids of the last TTL.
func (s *MemoryStore) Record(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.seen) > 0 && len(s.seen)%1024 == 0 {
		for k, exp := range s.seen {
			if !now.Before(exp) {
				delete(s.seen, k)
			}
		}
	}
	s.seen[id] = now.Add(s.ttl)
	return nil
}
