package server

import (
	"fmt"
	"net"
	"testing"
)

// routeFixture is a server that is never started plus connections over
// net.Pipe, so the publish path can be measured without sockets.
type routeFixture struct {
	srv   *Server
	pub   *conn
	subs  []*conn
	taken []*chunk // reused, as the writer does
}

func newRouteFixture(tb testing.TB, subscribers int, patterns ...string) *routeFixture {
	tb.Helper()
	srv, err := New(Options{})
	if err != nil {
		tb.Fatal(err)
	}
	f := &routeFixture{srv: srv, pub: pipeConn(tb, srv, 0)}
	for i := 0; i < subscribers; i++ {
		c := pipeConn(tb, srv, uint64(i+1))
		for k, p := range patterns {
			o := &op{kind: opSub, subject: []byte(p), sid: []byte(fmt.Sprint(k + 1))}
			if k%2 == 1 {
				o.queue = []byte("workers")
			}
			if err := c.processSub(o); err != nil {
				tb.Fatal(err)
			}
		}
		f.subs = append(f.subs, c)
	}
	return f
}

func pipeConn(tb testing.TB, srv *Server, id uint64) *conn {
	a, b := net.Pipe()
	tb.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	c := newConn(srv, a, id)
	c.opts.verbose = false
	return c
}

// drainOutbound empties every subscriber's queue as its writer would.
func (f *routeFixture) drainOutbound() {
	for _, c := range f.subs {
		f.taken = c.out.take(f.taken)
		c.out.written(f.taken)
	}
}

func TestPublishAllocatesNothingPerMessage(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	f := newRouteFixture(t, 3, "orders.eu", "orders.*", "orders.>")
	subject, reply, payload := []byte("orders.eu"), []byte("_INBOX.x.y"), []byte("hello world")
	run := func() {
		if n := f.pub.publish(subject, reply, -1, payload); n != 7 { // two plain subscriptions on each of 3 connections, one queue group
			t.Fatalf("delivered to %d subscriptions", n)
		}
		f.pub.wakeWriters()
		f.drainOutbound()
	}
	run() // warm the match cache and the buffers
	if allocs := testing.AllocsPerRun(1000, run); allocs != 0 {
		t.Fatalf("publish allocates %.1f times per message, want 0", allocs)
	}
}

func BenchmarkPublishFanout(b *testing.B) {
	for _, fanout := range []int{1, 10} {
		for _, size := range []int{16, 1024} {
			b.Run(fmt.Sprintf("subs=%d/size=%d", fanout, size), func(b *testing.B) {
				f := newRouteFixture(b, fanout, "bench.subject")
				subject, payload := []byte("bench.subject"), make([]byte, size)
				b.ReportAllocs()
				b.SetBytes(int64(size * fanout))
				i := 0
				for b.Loop() {
					f.pub.publish(subject, nil, -1, payload)
					if i++; i%64 == 0 {
						f.pub.wakeWriters()
						f.drainOutbound()
					}
				}
			})
		}
	}
}
