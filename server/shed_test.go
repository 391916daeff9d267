package server

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// shedFixture is a server bounded to shedTotal bytes of outbound queues
// and the server-side conns of two raw clients, in the order dialled.
// Their queues are filled directly while the test holds their writers'
// turns (see holdWriterTurn), so what each holds is exact.
func shedFixture(t *testing.T) (*Server, []*conn) {
	t.Helper()
	f := newTCPFixture(t, Options{MaxPending: shedTotal, MaxPendingTotal: shedTotal})
	f.dial(t, "")
	f.dial(t, "")
	f.srv.mu.Lock()
	var conns []*conn
	for _, c := range f.srv.conns {
		conns = append(conns, c)
	}
	f.srv.mu.Unlock()
	slices.SortFunc(conns, func(a, b *conn) int { return int(a.id) - int(b.id) })
	if len(conns) != 2 {
		t.Fatalf("%d conns, want 2", len(conns))
	}
	return f.srv, conns
}

const shedTotal = 8 * chunkSize

// holdWriterTurn takes c's writing turn, as a reader writing inline does,
// once whoever wrote last is done: its writer then takes nothing (a wake
// left from the handshake would otherwise send what the test queues).
// The turn ends at cleanup, before the server shuts down.
func holdWriterTurn(t *testing.T, c *conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.out.mu.Lock()
		if !c.out.flushing {
			c.out.flushing = true
			c.out.mu.Unlock()
			break
		}
		c.out.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("cid %d: its writer kept its turn", c.id)
		}
		time.Sleep(time.Millisecond)
	}
	t.Cleanup(func() {
		c.out.mu.Lock()
		c.out.doneLocked()
		c.out.mu.Unlock()
		c.out.signal() // it may have been closed meanwhile: its writer may stop
	})
}

// queueChunks queues n whole chunks on c without waking its writer.
func queueChunks(c *conn, n int) {
	for range n {
		c.out.appendControl(strings.Repeat("x", chunkSize))
	}
}

// TestShedCountsOnlyLiveQueues: the bound is judged on the queues of
// connections still open. A connection closed some other way (its own
// max_pending, a write error) still holds chunks until its writer's write
// fails, and closing a short queue that reads would not free them: in
// tests/TestTotalPendingIsBounded the reader, with 64 KiB queued, was
// closed for the 16 MiB the last never-reading subscriber, closed for its
// own max_pending a moment before, had not yet given back.
func TestShedCountsOnlyLiveQueues(t *testing.T) {
	s, conns := shedFixture(t)
	closed, reader := conns[0], conns[1]
	holdWriterTurn(t, closed)
	holdWriterTurn(t, reader)
	// closed's writer cannot take its turn, as while a blocked writev
	// holds it, so its chunks stay out after it is closed. It queues them
	// under the bound, so the shedder has no reason to close it first.
	queueChunks(closed, 6)
	closed.slowConsumer()
	queueChunks(reader, 3) // the ninth chunk out wakes the shedder
	if !s.chunks.over() {
		t.Fatalf("held %d bytes, want over %d", s.chunks.heldBytes(), shedTotal)
	}
	if s.shedLongestQueue() {
		t.Error("a connection was shed for chunks a closed connection holds")
	}
	if reader.closing.Load() {
		t.Error("the reader, with three chunks queued, was closed")
	}
}

// TestShedClosesLongestLiveQueue: over the bound, the shedder closes
// the open connection with the longest queue, gives back what it queued
// at once, and keeps the queue that is left under the bound.
func TestShedClosesLongestLiveQueue(t *testing.T) {
	s, conns := shedFixture(t)
	short, long := conns[0], conns[1]
	holdWriterTurn(t, short)
	holdWriterTurn(t, long)
	queueChunks(short, 2)
	queueChunks(long, 8) // the ninth chunk out wakes the shedder
	deadline := time.Now().Add(5 * time.Second)
	for s.chunks.over() {
		if time.Now().After(deadline) {
			t.Fatalf("still over the bound: %d bytes held", s.chunks.heldBytes())
		}
		time.Sleep(time.Millisecond)
	}
	if !long.closing.Load() {
		t.Error("the longest queue was not shed")
	}
	if s.shedLongestQueue() || short.closing.Load() {
		t.Error("the short queue, under the bound, was closed")
	}
}
