package server

import (
	"fmt"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// deliveryState is a consumer's delivered/pending/ack-floor bookkeeping.
// Durable consumers use jetlog.Consumer, which journals every change;
// ephemeral ones keep it in memory (memState).
type deliveryState interface {
	Deliver(seq uint64) (jetlog.Pending, error)
	Ack(seq uint64) (bool, error)
	AckAll(seq uint64) (int, error)
	Term(seq uint64) (bool, error)
	Nak(seq uint64, delay time.Duration) (bool, error)
	InProgress(seq uint64) (bool, error)
	Due() []uint64
	Info() jetlog.ConsumerInfo
	// Apply makes several changes as one journaled (and synced) step.
	Apply(fn func(s *jetlog.ConsumerState) error) error
	// ApplyLazy journals without waiting for the sync: for changes whose
	// loss only causes a redelivery.
	ApplyLazy(fn func(s *jetlog.ConsumerState) error) error
	Close() error
}

// memState is an in-memory deliveryState.
type memState struct {
	mu            sync.Mutex // guards s
	s             jetlog.ConsumerState
	maxAckPending int
}

func newMemState(ackWait time.Duration, backoff []time.Duration, maxAckPending int) *memState {
	return &memState{s: jetlog.NewConsumerState(ackWait, backoff, nil), maxAckPending: maxAckPending}
}

func (m *memState) Deliver(seq uint64) (jetlog.Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.s.Pending[seq]; !ok && m.maxAckPending > 0 && len(m.s.Pending) >= m.maxAckPending {
		return jetlog.Pending{}, fmt.Errorf("deliver %d: %w", seq, jetlog.ErrMaxAckPending)
	}
	return m.s.Deliver(seq), nil
}

func (m *memState) Ack(seq uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.Ack(seq), nil
}

func (m *memState) AckAll(seq uint64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.AckAll(seq), nil
}

func (m *memState) Term(seq uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.Term(seq), nil
}

func (m *memState) Nak(seq uint64, delay time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.Nak(seq, delay), nil
}

func (m *memState) InProgress(seq uint64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.InProgress(seq), nil
}

func (m *memState) Due() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.Due()
}

func (m *memState) Info() jetlog.ConsumerInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return jetlog.ConsumerInfo{
		Delivered:      m.s.Delivered,
		AckFloor:       m.s.AckFloor,
		NumAckPending:  len(m.s.Pending),
		NumRedelivered: m.s.NumRedelivered(),
	}
}

func (m *memState) Apply(fn func(s *jetlog.ConsumerState) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(&m.s)
}

func (m *memState) ApplyLazy(fn func(s *jetlog.ConsumerState) error) error { return m.Apply(fn) }

func (m *memState) Close() error { return nil }
