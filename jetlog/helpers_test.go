package jetlog

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// storeKind is one storage back end the shared test bodies run against.
type storeKind struct {
	name    string
	storage Storage
}

var storeKinds = []storeKind{{"file", StorageFile}, {"memory", StorageMemory}}

// forEachStore runs body once per storage kind.
func forEachStore(t *testing.T, body func(t *testing.T, k storeKind)) {
	t.Helper()
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			body(t, k)
		})
	}
}

// openLog opens a log and closes it at cleanup.
func openLog(t *testing.T, dir string, cfg StreamConfig, opts Options) *Log {
	t.Helper()
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrWriteFenced) {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

func mustAppend(t *testing.T, l *Log, subject, data string) uint64 {
	t.Helper()
	ack, err := l.Append(Msg{Subject: subject, Data: []byte(data)}, Expect{})
	if err != nil {
		t.Fatalf("Append(%q): %v", subject, err)
	}
	return ack.Seq
}

func mustGet(t *testing.T, l *Log, seq uint64) Msg {
	t.Helper()
	m, err := l.Get(seq)
	if err != nil {
		t.Fatalf("Get(%d): %v", seq, err)
	}
	return m
}

func hdrWithID(id string) []byte {
	return fmt.Appendf(nil, "NATS/1.0\r\nNats-Msg-Id: %s\r\n\r\n", id)
}

// evictAll drops every loaded section the appender may evict, as an idle
// tick would.
func evictAll(t testing.TB, l *Log) uint64 {
	t.Helper()
	r := l.getReq()
	defer l.putReq(r)
	r.op, r.idle = opEvict, math.MaxInt64
	if err := l.send(r); err != nil {
		t.Fatal(err)
	}
	return r.n
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not a wait for an event
	}
}
