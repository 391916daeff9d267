package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// tcpFixture is a started server on loopback and raw protocol clients,
// so that the whole path of a message, socket to socket, is measured.
type tcpFixture struct {
	srv  *Server
	addr string
}

func newTCPFixture(tb testing.TB, opts Options) *tcpFixture {
	tb.Helper()
	opts.Host, opts.Port = "127.0.0.1", 0
	srv, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			tb.Error(err)
		}
	})
	return &tcpFixture{srv: srv, addr: srv.Addr().String()}
}

// rawClient speaks the protocol by hand, allocating nothing per message
// once set up, so a benchmark's allocs/op are the server's.
type rawClient struct {
	tb   testing.TB
	nc   net.Conn
	r    *bufio.Reader
	body []byte // payload of the last MSG read
}

// dial connects, sends CONNECT and the setup lines, and waits for the
// PONG that follows them, so the server has processed them all.
func (f *tcpFixture) dial(tb testing.TB, setup string) *rawClient {
	tb.Helper()
	nc, err := net.Dial("tcp", f.addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = nc.Close() })
	c := &rawClient{tb: tb, nc: nc, r: bufio.NewReaderSize(nc, 64*1024), body: make([]byte, 0, 64*1024)}
	if _, err := c.r.ReadSlice('\n'); err != nil { // INFO
		tb.Fatal(err)
	}
	c.send(`CONNECT {"verbose":false,"pedantic":false,"headers":true}` + "\r\n" + setup + "PING\r\n")
	for {
		line, err := c.r.ReadSlice('\n')
		switch {
		case err != nil:
			tb.Fatal(err)
		case string(line) == "PONG\r\n":
			return c
		case bytes.HasPrefix(line, []byte("MSG ")): // a publisher was quicker
			if _, err := c.msgBody(line); err != nil {
				tb.Fatal(err)
			}
		default:
			tb.Fatalf("got %q, want PONG", line)
		}
	}
}

func (c *rawClient) send(s string) { c.write([]byte(s)) }

func (c *rawClient) write(b []byte) {
	if _, err := c.nc.Write(b); err != nil {
		c.tb.Error(err)
	}
}

// readMsg reads one MSG frame and returns its payload (valid until the
// next read), answering any PING the server sends.
func (c *rawClient) readMsg() ([]byte, error) {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(line, []byte("PING")) {
			c.send("PONG\r\n")
			continue
		}
		if !bytes.HasPrefix(line, []byte("MSG ")) {
			return nil, fmt.Errorf("got %q, want MSG", line)
		}
		return c.msgBody(line)
	}
}

// msgBody reads the payload of the MSG whose line was just read.
func (c *rawClient) msgBody(line []byte) ([]byte, error) {
	sp := bytes.LastIndexByte(line, ' ')
	n, err := strconv.Atoi(string(bytes.TrimRight(line[sp+1:], "\r\n")))
	if err != nil {
		return nil, fmt.Errorf("bad MSG line %q", line)
	}
	c.body = c.body[:n+2]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return nil, err
	}
	return c.body[:n], nil
}

// BenchmarkRequestReplyTCP is one requester and one responder on
// loopback with a single request in flight, the case where a message
// cannot share a write with another (see conn.flushOrWake).
func BenchmarkRequestReplyTCP(b *testing.B) {
	for _, size := range []int{128, 4096} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			f := newTCPFixture(b, Options{})
			responder := f.dial(b, "SUB svc.echo 1\r\n")
			requester := f.dial(b, "SUB _INBOX.bench 1\r\n")
			payload := bytes.Repeat([]byte("x"), size)
			request := fmt.Appendf(nil, "PUB svc.echo _INBOX.bench %d\r\n%s\r\n", size, payload)
			reply := fmt.Appendf(nil, "PUB _INBOX.bench %d\r\n%s\r\n", size, payload)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					if _, err := responder.readMsg(); err != nil {
						return // closed when the benchmark ends
					}
					responder.write(reply)
				}
			}()
			b.ReportAllocs()
			b.SetBytes(int64(2 * size))
			for b.Loop() {
				requester.write(request)
				if msg, err := requester.readMsg(); err != nil || len(msg) != size {
					b.Fatalf("reply of %d bytes (%v), want %d", len(msg), err, size)
				}
			}
			b.StopTimer()
			_ = responder.nc.Close()
			<-done
		})
	}
}

// TestInlineWritesOnlyPlainTCP: a reader may write a connection's socket
// only when it is plain TCP; TLS (whose records the writer alone may
// produce) and anything else keep every write on the writer.
func TestInlineWritesOnlyPlainTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	dialTCP := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		peer, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close(); _ = peer.Close() })
		return c
	}
	cases := []struct {
		name   string
		nc     func(t *testing.T) net.Conn
		direct bool
	}{
		{"tcp", dialTCP, runtime.GOOS == "linux"},
		{"tls", func(t *testing.T) net.Conn { return tls.Server(dialTCP(t), &tls.Config{}) }, false},
		{"pipe", func(t *testing.T) net.Conn { a, _ := net.Pipe(); return a }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			nc := tc.nc(t)
			c := newConn(srv, nc, 1)
			srv.wg.Add(1)
			c.startWriter()
			if got := c.out.direct != nil; got != tc.direct {
				t.Errorf("direct writer: %v, want %v", got, tc.direct)
			}
			c.out.close()
			srv.wg.Wait()
		})
	}
}

// TestInlineWritesSurviveAFullSocket: a subscriber that stops reading
// fills its socket while the publisher's reader writes to it; what the
// socket refuses goes back to the queue and the writer delivers it, in
// order, whole and once, when the subscriber reads again. Each publish
// is its own read (the PING waits for its PONG), so every message is
// offered to the inline path.
func TestInlineWritesSurviveAFullSocket(t *testing.T) {
	t.Parallel()
	f := newTCPFixture(t, Options{})
	sub := f.dial(t, "SUB seq 1\r\n")
	// Small socket buffers, so that a megabyte is more than they hold.
	if err := sub.nc.(*net.TCPConn).SetReadBuffer(32 * 1024); err != nil {
		t.Fatal(err)
	}
	subConn := f.connWithSub(t, "seq")
	if err := subConn.raw.(*net.TCPConn).SetWriteBuffer(8 * 1024); err != nil {
		t.Fatal(err)
	}
	pub := f.dial(t, "")
	const msgs = 1000
	message := func(i int) []byte {
		size := 100 + i%7*300 // short ones go inline, a few cross chunk ends
		body := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		copy(body, strconv.Itoa(i)+" ")
		return body
	}
	var frame []byte
	for i := range msgs {
		body := message(i)
		frame = fmt.Appendf(frame[:0], "PUB seq %d\r\n%s\r\nPING\r\n", len(body), body)
		pub.write(frame)
		if line, err := pub.r.ReadSlice('\n'); err != nil || string(line) != "PONG\r\n" {
			t.Fatalf("message %d: got %q (%v), want PONG", i, line, err)
		}
	}
	if subConn.out.pending() == 0 {
		t.Fatal("the subscriber's socket took everything: the test needs more messages")
	}
	for i := range msgs {
		msg, err := sub.readMsg()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := message(i); !bytes.Equal(msg, want) {
			t.Fatalf("message %d: got %d bytes starting %q, want %d", i, len(msg), msg[:min(len(msg), 12)], len(want))
		}
	}
}

// connWithSub is the server's connection that subscribed to subject.
func (f *tcpFixture) connWithSub(tb testing.TB, subject string) *conn {
	tb.Helper()
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	for _, c := range f.srv.conns {
		c.mu.Lock()
		var found bool
		for _, sub := range c.subs {
			found = found || sub.subject == subject
		}
		c.mu.Unlock()
		if found {
			return c
		}
	}
	tb.Fatalf("no connection subscribed to %q", subject)
	return nil
}

// TestInlineWritesWithClosingSubscribers: subscribers that hang up while
// publishers' readers write to them leave no chunk behind and no
// goroutine running (goleak), and the race detector sees the reader and
// the writer take turns.
func TestInlineWritesWithClosingSubscribers(t *testing.T) {
	t.Parallel()
	f := newTCPFixture(t, Options{})
	pubs := make([]*rawClient, 2)
	for i := range pubs {
		pubs[i] = f.dial(t, "")
	}
	stop := make(chan struct{})
	errs := make(chan error, len(pubs))
	for _, p := range pubs {
		go func() {
			frame := []byte("PUB churn 5\r\nhello\r\nPUB churn 5\r\nworld\r\n")
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				if _, err := p.nc.Write(frame); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 50 {
		sub := f.dial(t, "SUB churn 1\r\n")
		if _, err := sub.readMsg(); err != nil {
			t.Fatal(err)
		}
		if err := sub.nc.(*net.TCPConn).SetLinger(0); err != nil { // hang up with a reset
			t.Fatal(err)
		}
		_ = sub.nc.Close()
	}
	close(stop)
	for range pubs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pubs {
		_ = p.nc.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.chunks.out.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d chunks still held after every client left", f.srv.chunks.out.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFlushDirectRequeuesWhatTheSocketRefuses drives the inline write of
// one queue against a socket with a small buffer whose peer reads only
// when the test says: writes the socket refuses (or takes in part) leave
// the rest at the front of the queue, and the peer reads exactly the
// bytes queued, in order. (Linux rarely takes part of a write on
// loopback unless the receive window is tiny, which makes a test crawl,
// so TestCutWritten pins that arithmetic.)
func TestFlushDirectRequeuesWhatTheSocketRefuses(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("readers write inline on Linux only")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w := nc.(*net.TCPConn)
	t.Cleanup(func() { _ = w.Close() })
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peer.Close() })
	if err := w.SetWriteBuffer(4096); err != nil {
		t.Fatal(err)
	}
	if err := peer.(*net.TCPConn).SetReadBuffer(64 * 1024); err != nil {
		t.Fatal(err)
	}

	o := newOutbound(newChunkPool(), 1<<30)
	o.direct = newDirectWriter(w)
	var want, got bytes.Buffer
	buf := make([]byte, 16*1024)
	halves, refusals := 0, 0 // writes the socket took in part, or not at all
	for i := 0; i < 3000 || o.pending() > 0; {
		if i < 3000 {
			line := fmt.Sprintf("%d %s\r\n", i, bytes.Repeat([]byte{byte('a' + i%26)}, i%13*97))
			if o.pending()+len(line) <= inlineMax {
				want.WriteString(line)
				o.appendControl(line)
				i++
			}
		}
		before := o.pending()
		o.flushDirect()
		after := o.pending()
		switch {
		case after == 0:
			continue
		case after < before:
			halves++
		default:
			refusals++
		}
		n, err := peer.Read(buf) // the socket is full: make some room
		if err != nil {
			t.Fatal(err)
		}
		got.Write(buf[:n])
	}
	_ = w.Close()
	rest, err := io.ReadAll(peer)
	if err != nil {
		t.Fatal(err)
	}
	got.Write(rest)
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("peer read %d bytes, want %d (first difference at %d)", got.Len(), want.Len(), firstDiff(got.Bytes(), want.Bytes()))
	}
	if refusals == 0 {
		t.Error("the socket never refused a write: the test did not cover requeuing")
	}
	if n := o.pool.out.Load(); n != 0 {
		t.Errorf("%d chunks not returned to the pool", n)
	}
	t.Logf("%d writes taken in part, %d refused", halves, refusals) // in part: see TestCutWritten
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestCutWritten(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sizes []int
		n     int
		whole int
		left  string // what the first chunk not written whole holds
	}{
		{"nothing written", []int{5, 3}, 0, 0, "abcde"},
		{"into the first", []int{5, 3}, 2, 0, "cde"},
		{"the first exactly", []int{5, 3}, 5, 1, "fgh"},
		{"into the second", []int{5, 3}, 6, 1, "gh"},
		{"all", []int{5, 3}, 8, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var chunks []*chunk
			next := byte('a')
			for _, size := range tc.sizes {
				c := &chunk{b: make([]byte, 0, chunkSize)}
				for range size {
					c.b = append(c.b, next)
					next++
				}
				chunks = append(chunks, c)
			}
			whole := cutWritten(chunks, tc.n)
			if whole != tc.whole {
				t.Fatalf("whole = %d, want %d", whole, tc.whole)
			}
			if whole == len(chunks) {
				return
			}
			c := chunks[whole]
			if string(c.b) != tc.left || cap(c.b) != chunkSize {
				t.Errorf("left %q with capacity %d, want %q with %d", c.b, cap(c.b), tc.left, chunkSize)
			}
		})
	}
}
