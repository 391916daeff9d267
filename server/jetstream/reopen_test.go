package jetstream

import (
	"testing"
	"time"
)

// A stream that keeps getting fenced is reopened at growing intervals,
// up to about a minute, and at once again after a calm spell.
func TestReopenBackoffDoublesAndStartsOver(t *testing.T) {
	b := reopenBackoff{}
	now := time.Unix(1000, 0)
	var waits []time.Duration
	for range 9 {
		if !b.due("S", now) {
			t.Fatalf("not due at %v", now)
		}
		b.tried("S", now)
		waits = append(waits, b["S"].wait)
		if b.due("S", now.Add(b["S"].wait-time.Millisecond)) {
			t.Fatalf("due before its wait of %v", b["S"].wait)
		}
		now = now.Add(b["S"].wait)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 64, 64, 64}
	for i, w := range want {
		if waits[i] != w*time.Second {
			t.Fatalf("waits %v, want %v seconds", waits, want)
		}
	}
	if !b.due("other", now) {
		t.Fatal("another stream waits for this one")
	}
	now = now.Add(reopenCalm + time.Minute)
	b.tried("S", now)
	if b["S"].wait != fenceRetryEvery {
		t.Fatalf("after a calm spell the wait is %v", b["S"].wait)
	}
}
