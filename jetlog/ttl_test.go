package jetlog

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestParseTTL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"30", 30, false}, {"0", 0, true}, {"1s", 1, false}, {"1m30s", 90, false},
		{"never", -1, false}, {"NEVER", -1, false}, {"500ms", 0, true}, {"-5", 0, true},
		{"+5", 0, true}, {"", 0, true}, {"5x", 0, true}, {"999999999999999999999", 0, true},
		{"1.5s", 1, false},
	} {
		got, err := ParseTTL([]byte(tc.in))
		if tc.bad != (err != nil) || got != tc.want {
			t.Errorf("ParseTTL(%q) = %d, %v; want %d, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
		if err != nil && !errors.Is(err, ErrBadTTL) {
			t.Errorf("ParseTTL(%q) error %v is not ErrBadTTL", tc.in, err)
		}
	}
}

func ttlHdr(v string) []byte { return fmt.Appendf(nil, "NATS/1.0\r\nNats-TTL: %s\r\n\r\n", v) }

func appendTTL(t *testing.T, l *Log, subject, ttl string) uint64 {
	t.Helper()
	ack, err := l.Append(Msg{Subject: subject, Header: ttlHdr(ttl), Data: []byte("v")}, Expect{})
	if err != nil {
		t.Fatalf("Append(%q, ttl %s): %v", subject, ttl, err)
	}
	return ack.Seq
}

func liveSeqs(t *testing.T, l *Log) []uint64 {
	t.Helper()
	var out []uint64
	for m, err := range l.Messages(1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Seq)
	}
	return out
}

// TestMsgTTLExpires: a message goes when its own TTL passes, the others
// stay, and a reopened log remembers the TTLs from the headers.
func TestMsgTTLExpires(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		clock := newFakeClock()
		dir := t.TempDir()
		cfg := StreamConfig{Name: "T", Storage: k.storage, MsgTTL: true}
		opts := Options{Now: clock.Now, ExpireEvery: -1}
		l, err := Open(dir, cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		short := appendTTL(t, l, "a", "2s")
		long := appendTTL(t, l, "b", "1m")
		plain := mustAppend(t, l, "c", "no ttl")
		clock.Advance(time.Second)
		if n, _ := l.Expire(); n != 0 {
			t.Fatalf("expired %d before any TTL passed", n)
		}
		clock.Advance(time.Second)
		if n, _ := l.Expire(); n != 1 {
			t.Fatalf("expired %d at 2s, want 1", n)
		}
		if got := liveSeqs(t, l); !slices.Equal(got, []uint64{long, plain}) {
			t.Fatalf("live %v, want %v (seq %d expired)", got, []uint64{long, plain}, short)
		}
		if k.storage == StorageMemory {
			_ = l.Close()
			return
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openLog(t, dir, cfg, opts)
		clock.Advance(time.Minute)
		if n, _ := l.Expire(); n != 1 {
			t.Fatalf("after reopen expired %d, want 1", n)
		}
		if got := liveSeqs(t, l); !slices.Equal(got, []uint64{plain}) {
			t.Fatalf("live %v, want [%d]", got, plain)
		}
	})
}

// TestMsgTTLNeverOutlivesMaxAge: "never" exempts a message from max age.
func TestMsgTTLNeverOutlivesMaxAge(t *testing.T) {
	clock := newFakeClock()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "T", MsgTTL: true, MaxAge: time.Minute}, Options{Now: clock.Now, ExpireEvery: -1})
	old := mustAppend(t, l, "a", "1")
	keep := appendTTL(t, l, "b", "never")
	mustAppend(t, l, "c", "3")
	clock.Advance(30 * time.Second)
	young := mustAppend(t, l, "d", "4")
	clock.Advance(45 * time.Second)
	if n, _ := l.Expire(); n != 2 {
		t.Fatalf("expired %d, want 2", n)
	}
	if got := liveSeqs(t, l); !slices.Equal(got, []uint64{keep, young}) {
		t.Fatalf("live %v, want [%d %d] (%d aged out)", got, keep, young, old)
	}
}

// TestSubjectDeleteMarkerReport: the stream hears of a subject whose last
// message expired, but not of one that keeps messages, nor of a marker
// expiring.
func TestSubjectDeleteMarkerReport(t *testing.T) {
	clock := newFakeClock()
	var mu sync.Mutex
	var heard []string
	opts := Options{Now: clock.Now, ExpireEvery: -1, OnSubjectExpired: func(s []string) {
		mu.Lock()
		heard = append(heard, s...)
		mu.Unlock()
	}}
	l := openLog(t, t.TempDir(), StreamConfig{Name: "T", MsgTTL: true, SubjectDeleteMarkerTTL: time.Minute}, opts)
	appendTTL(t, l, "a", "1s")
	appendTTL(t, l, "b", "1s")
	mustAppend(t, l, "b", "stays")
	marker := []byte("NATS/1.0\r\nNats-Marker-Reason: MaxAge\r\nNats-TTL: 1s\r\n\r\n")
	if _, err := l.Append(Msg{Subject: "c", Header: marker}, Expect{}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if n, _ := l.Expire(); n != 3 {
		t.Fatalf("expired %d, want 3", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(heard, []string{"a"}) {
		t.Fatalf("subjects reported %v, want [a]", heard)
	}
}
