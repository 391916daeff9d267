package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// rawConn is the least a protocol client needs: CONNECT, write lines,
// wait for PONG. The memory and interest-graph scenarios use it to open
// thousands of connections or a million subscriptions cheaply; nats.go
// would add goroutines and buffers per connection to this process.
// Not safe for concurrent use.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

const connectLine = `CONNECT {"verbose":false,"pedantic":false,"protocol":1,"name":"bus-bench"}` + "\r\n"

// dialRaw connects, reads INFO, sends CONNECT and waits for the PONG that
// proves the server has registered the connection.
func dialRaw(ctx context.Context, addr string) (*rawConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	rc := &rawConn{c: c, r: bufio.NewReaderSize(c, 4096), w: bufio.NewWriterSize(c, 64<<10)}
	if err := rc.handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return rc, nil
}

func (rc *rawConn) handshake(ctx context.Context) error {
	rc.setDeadline(ctx)
	line, err := rc.r.ReadString('\n')
	if err != nil {
		return fmt.Errorf("read INFO: %w", err)
	}
	if !strings.HasPrefix(line, "INFO ") {
		return fmt.Errorf("expected INFO, got %q", line)
	}
	if _, err := rc.w.WriteString(connectLine); err != nil {
		return err
	}
	return rc.ping(ctx)
}

func (rc *rawConn) setDeadline(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(time.Minute)
	}
	_ = rc.c.SetDeadline(dl)
}

// ping flushes what is buffered, sends PING and waits for PONG, so every
// earlier line (SUB, CONNECT) has been processed by the server. It answers
// server PINGs on the way and fails on -ERR. Call it only while no
// messages can arrive for this connection.
func (rc *rawConn) ping(ctx context.Context) error {
	rc.setDeadline(ctx)
	if _, err := rc.w.WriteString("PING\r\n"); err != nil {
		return err
	}
	if err := rc.w.Flush(); err != nil {
		return err
	}
	for {
		line, err := rc.r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("wait for PONG: %w", err)
		}
		switch {
		case line == "PONG\r\n":
			return nil
		case line == "PING\r\n":
			if _, err := rc.c.Write([]byte("PONG\r\n")); err != nil {
				return err
			}
		case strings.HasPrefix(line, "-ERR"):
			return fmt.Errorf("server: %s", strings.TrimSpace(line))
		}
	}
}

// sub buffers a SUB line; ping sends it.
func (rc *rawConn) sub(subject string, sid int) error {
	_, err := fmt.Fprintf(rc.w, "SUB %s %d\r\n", subject, sid)
	return err
}

// drain discards whatever the server sends from now on until the
// connection is closed; for connections whose subscriptions match traffic
// that nobody counts.
func (rc *rawConn) drain() {
	_ = rc.c.SetDeadline(time.Time{})
	go func() { _, _ = io.Copy(io.Discard, rc.c) }()
}

func (rc *rawConn) close() { rc.c.Close() }

// openIdle opens n connections with `workers` dialers in parallel, each
// with dial (dialRaw, dialWS), and returns them once the server has
// answered PING on every one.
func openIdle(ctx context.Context, addr string, n, workers int, dial func(context.Context, string) (*rawConn, error)) ([]*rawConn, error) {
	conns := make([]*rawConn, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				rc, err := dial(ctx, addr)
				if err != nil {
					errs[w] = fmt.Errorf("connection %d: %w", i, err)
					return
				}
				conns[i] = rc
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		closeAll(conns)
		return nil, err
	}
	return conns, nil
}

func closeAll(conns []*rawConn) {
	for _, rc := range conns {
		if rc != nil {
			rc.close()
		}
	}
}

// subscribeMany opens len(subjectSets) connections in parallel and
// subscribes each to its subjects, returning once the server has
// processed every SUB.
func subscribeMany(ctx context.Context, addr string, subjectSets [][]string) ([]*rawConn, error) {
	conns := make([]*rawConn, len(subjectSets))
	errs := make([]error, len(subjectSets))
	var wg sync.WaitGroup
	for i, subjects := range subjectSets {
		wg.Go(func() {
			rc, err := dialRaw(ctx, addr)
			if err != nil {
				errs[i] = err
				return
			}
			conns[i] = rc
			for sid, subj := range subjects {
				if err := rc.sub(subj, sid+1); err != nil {
					errs[i] = err
					return
				}
			}
			errs[i] = rc.ping(ctx)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(conns)
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	return conns, nil
}

// queueGroup is `members` nats.go connections in one queue group on
// subject, counting deliveries together.
type queueGroup struct {
	conns    []*nats.Conn
	want     int64
	received atomic.Int64
	first    atomic.Int64  // unix nanos of the first delivery
	last     atomic.Int64  // unix nanos of delivery number want
	done     chan struct{} // closed at delivery number want
	asyncErr atomic.Value  // first error nats.go reported asynchronously
}

// joinQueueGroup subscribes the members and returns after each
// connection's flush, when the server knows every member.
func joinQueueGroup(ctx context.Context, url, subject string, members int, want int64) (*queueGroup, error) {
	q := &queueGroup{want: want, done: make(chan struct{})}
	handler := func(*nats.Msg) {
		n := q.received.Add(1)
		if n == 1 {
			q.first.Store(time.Now().UnixNano())
		}
		if n == q.want {
			q.last.Store(time.Now().UnixNano())
			close(q.done)
		}
	}
	for i := range members {
		nc, err := nats.Connect(url, nats.Name("bench-queue-"+strconv.Itoa(i)), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
				q.asyncErr.CompareAndSwap(nil, err)
			}))
		if err != nil {
			q.close()
			return nil, fmt.Errorf("queue member %d: %w", i, err)
		}
		q.conns = append(q.conns, nc)
		sub, err := nc.QueueSubscribe(subject, "workers", handler)
		if err == nil {
			err = sub.SetPendingLimits(-1, -1)
		}
		if err == nil {
			err = nc.FlushWithContext(ctx)
		}
		if err != nil {
			q.close()
			return nil, fmt.Errorf("queue member %d: %w", i, err)
		}
	}
	return q, nil
}

// rate waits for all deliveries and returns messages per second from the
// first delivery to the last, as `nats bench sub` measures.
func (q *queueGroup) rate(ctx context.Context) (float64, error) {
	select {
	case <-q.done:
	case <-ctx.Done():
		err, _ := q.asyncErr.Load().(error)
		return 0, fmt.Errorf("queue group got %d of %d messages (%v): %w", q.received.Load(), q.want, err, ctx.Err())
	}
	secs := float64(q.last.Load()-q.first.Load()) / 1e9
	if secs <= 0 {
		return 0, fmt.Errorf("queue group: zero elapsed time")
	}
	return float64(q.want) / secs, nil
}

func (q *queueGroup) close() {
	for _, nc := range q.conns {
		nc.Close()
	}
}

// createStream creates a file stream through the JetStream API with the
// attributes `nats bench js pub --create` uses, plus bus's durability mode.
func createStream(ctx context.Context, url, name, subject, durability string) error {
	nc, err := nats.Connect(url, nats.Name("bench-admin"), nats.NoReconnect())
	if err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	defer nc.Close()
	cfg, err := json.Marshal(map[string]any{
		"name": name, "subjects": []string{subject}, "retention": "limits", "discard": "new",
		"storage": "file", "num_replicas": 1, "max_bytes": 1 << 30, "duplicate_window": int64(2 * time.Minute),
		"allow_direct": true, "x_bus_durability": durability,
	})
	if err != nil {
		return err
	}
	msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.CREATE."+name, cfg)
	if err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	var resp struct {
		Config struct {
			Durability string `json:"x_bus_durability"`
		} `json:"config"`
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("create stream: response %q: %w", msg.Data, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("create stream: %s", resp.Error.Description)
	}
	if resp.Config.Durability != durability {
		return fmt.Errorf("create stream: asked for durability %q, server reports %q", durability, resp.Config.Durability)
	}
	return nil
}
