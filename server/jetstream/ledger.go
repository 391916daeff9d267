package jetstream

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/bus-dev/bus/jetlog"
)

// ledger is where a consumer's delivery state (delivered, ack floor,
// pending with delivery counts and deadlines) lives: journaled for a
// consumer of a file stream (jetlog.Consumer), in memory for one of a
// memory stream or one that asked for mem_storage (memLedger). It is the one home of the delivery counts. Safe for
// concurrent use: the consumer's goroutine changes it, API and monitoring
// requests read it.
type ledger interface {
	// Update runs fn on the state and journals what it changed as one
	// step; with sync it returns once that step is durable. An fn that
	// changes nothing costs no I/O, which makes Update a consistent read
	// as well.
	Update(fn func(s *jetlog.ConsumerState), sync bool) error
	Info() jetlog.ConsumerInfo
	// NumAckPending is Info().NumAckPending, cheaply: Info walks the
	// pending set to count redeliveries.
	NumAckPending() int
	// SetRaw stores the consumer's API config again (a pause changed it),
	// durably for a journaled ledger.
	SetRaw(raw []byte) error
	Close() error
}

// journaled adapts a durable consumer's journal to ledger.
type journaled struct {
	*jetlog.Consumer
	log *slog.Logger
}

// Update runs fn as one journaled step. A lazy step whose journal write
// failed (a full disk) is kept in the state and written with a later
// one, as jetlog promises (ErrJournalBehind): it is logged and counts as
// done, since a lazy step may be lost in a crash anyway (a delivery or
// an ack only comes again). Before, the machine took the error as
// "nothing recorded" and withheld the deliveries the state already had
// as pending, so a consumer on a full disk delivered nothing.
func (j journaled) Update(fn func(s *jetlog.ConsumerState), sync bool) error {
	step := func(s *jetlog.ConsumerState) error { fn(s); return nil }
	if sync {
		return j.Apply(step)
	}
	err := j.ApplyLazy(step)
	if errors.Is(err, jetlog.ErrJournalBehind) {
		j.log.Warn("consumer journal behind its state", "err", err)
		return nil
	}
	return err
}

// memLedger is an in-memory ledger.
type memLedger struct {
	mu sync.Mutex // guards s
	s  jetlog.ConsumerState
}

func newMemLedger(s jetlog.ConsumerState) *memLedger { return &memLedger{s: s} }

func (m *memLedger) Update(fn func(s *jetlog.ConsumerState), _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn(&m.s)
	return nil
}

func (m *memLedger) Info() jetlog.ConsumerInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	return jetlog.ConsumerInfo{
		Delivered:      m.s.Delivered,
		AckFloor:       m.s.AckFloor,
		NumAckPending:  len(m.s.Pending),
		NumRedelivered: m.s.NumRedelivered(),
		NumGivenUp:     len(m.s.GivenUp),
	}
}

func (m *memLedger) NumAckPending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.s.Pending)
}

func (m *memLedger) SetRaw([]byte) error { return nil }

func (m *memLedger) Close() error { return nil }
