package tests

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// traceLines collects protocol trace lines ("<<- [PUB a 2]"), from bus's
// records at server.LevelTrace and the reference's Tracef alike.
type traceLines struct {
	mu    sync.Mutex
	lines []string // guarded by mu
}

func (l *traceLines) add(s string) {
	// The reference prefixes the connection ("127.0.0.1:5000 - cid:5 -
	// "); bus has it in attributes.
	if i := strings.Index(s, "<<- "); i >= 0 {
		s = s[i:]
	} else if i := strings.Index(s, "->> "); i >= 0 {
		s = s[i:]
	} else {
		return
	}
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

func (l *traceLines) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// waitFor waits until the lines end with last.
func (l *traceLines) waitFor(t *testing.T, last string) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := l.snapshot()
		if len(got) > 0 && got[len(got)-1] == last {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trace line %q; got:\n%s", last, strings.Join(got, "\n"))
		}
		time.Sleep(5 * time.Millisecond) // polling the log: nothing to wait on
	}
}

// Enabled, Handle, WithAttrs and WithGroup make traceLines a slog.Handler.
func (l *traceLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *traceLines) Handle(_ context.Context, r slog.Record) error {
	if r.Level == server.LevelTrace {
		l.add(r.Message)
	}
	return nil
}
func (l *traceLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *traceLines) WithGroup(string) slog.Handler      { return l }

// The reference's natsserver.Logger.
func (l *traceLines) Noticef(string, ...any)       {}
func (l *traceLines) Warnf(string, ...any)         {}
func (l *traceLines) Fatalf(string, ...any)        {}
func (l *traceLines) Errorf(string, ...any)        {}
func (l *traceLines) Debugf(string, ...any)        {}
func (l *traceLines) Tracef(f string, args ...any) { l.add(fmt.Sprintf(f, args...)) }

// A connection's protocol trace is the reference's, line for line: ops
// in, payloads, deliveries, PONG, +OK and -ERR, with CONNECT's password
// redacted and a long payload cut at max_traced_msg_len (issue 23).
func TestProtocolTraceMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		maxLen  int
		headers bool
		in      string
	}{
		{"pub sub", 0, false, `CONNECT {"verbose":false,"pedantic":false,"headers":true,"user":"u","pass":"secret","protocol":1}` + "\r\n" +
			"SUB a 1\r\nSUB b q 2\r\nPUB a 5\r\nhello\r\nPUB b r 0\r\n\r\nHPUB a 12 14\r\nNATS/1.0\r\n\r\nhi\r\nUNSUB 1 3\r\nUNSUB 2\r\n"},
		{"verbose ok and errors", 0, false, "CONNECT {\"verbose\":true}\r\nSUB a 1\r\nPUB a 1\r\nx\r\nSUB foo..bar 2\r\n"},
		{"max traced msg len", 4, false, quiet + "SUB a 1\r\nPUB a 10\r\n0123456789\r\n"},
		{"trace headers", 0, true, quiet + "SUB a 1\r\nHPUB a 18 20\r\nNATS/1.0\r\nX: 1\r\n\r\nhi\r\nPUB a 2\r\nno\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var busLines, refLines traceLines
			opts := server.Options{Trace: true, MaxTracedMsgLen: tc.maxLen, TraceHeaders: tc.headers, Logger: slog.New(&busLines)}
			withUser := strings.Contains(tc.in, `"user"`)
			if withUser {
				opts.Authorization = server.Authorization{User: "u", Password: "secret"}
			}
			b := startBus(t, opts)
			r := startReferenceWith(t, func(o *natsserver.Options) {
				o.Trace, o.MaxTracedMsgLen, o.TraceHeaders = true, tc.maxLen, tc.headers
				if withUser {
					o.Username, o.Password = "u", "secret"
				}
			})
			r.SetLogger(&refLines, false, true)
			for _, side := range []struct {
				addr  string
				lines *traceLines
			}{{b.Addr().String(), &busLines}, {refAddr(r), &refLines}} {
				rc := dialRaw(t, side.addr)
				rc.send(tc.in + "PING\r\n")
				side.lines.waitFor(t, "->> [PONG]")
			}
			got, want := busLines.snapshot(), refLines.snapshot()
			if strings.Contains(strings.Join(got, ""), "secret") {
				t.Errorf("the password reached the trace: %q", got)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("trace differs\n  bus:\n    %s\n  reference:\n    %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
			}
		})
	}
}

// A message a leaf sends its hub is traced as the reference's leaf
// traces it: "->> [LMSG subject size]" and its payload.
func TestProtocolTraceOfLeafMatchesReference(t *testing.T) {
	t.Parallel()
	got := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		hub := startHubCluster(t, 1, false, nil)
		var lines traceLines
		var leafURL string
		if side == "bus" {
			leafURL = busURL(startBusLeaf(t, hub, server.Options{Trace: true, Logger: slog.New(&lines)}, server.LeafRemote{URLs: hub.leafURLs()}))
		} else {
			// The reference takes a connection's trace flag when the
			// connection is made: the logger goes in before Start.
			u, err := url.Parse(hub.leafURLs()[0])
			if err != nil {
				t.Fatal(err)
			}
			ns := startReferenceServer(t, &natsserver.Options{Host: "127.0.0.1", Port: -1, NoSigs: true, Trace: true,
				LeafNode: natsserver.LeafNodeOpts{Remotes: []*natsserver.RemoteLeafOpts{{URLs: []*url.URL{u}}}}},
				func(ns *natsserver.Server) { ns.SetLogger(&lines, false, true) })
			eventually(t, 10*time.Second, func() bool { return ns.NumLeafNodes() > 0 })
			leafURL = ns.ClientURL()
		}
		far := connect(t, hub.clientURL(0))
		sub, err := far.SubscribeSync("orders.new")
		if err != nil {
			t.Fatal(err)
		}
		flushAll(t, far)
		pub := connect(t, leafURL)
		awaitRoute(t, pub, sub, "orders.new")
		if err := pub.Publish("orders.new", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		lines.waitFor(t, `->> MSG_PAYLOAD: ["hello"]`)
		all := lines.snapshot()
		got[side] = all[len(all)-2:]
	}
	if strings.Join(got["bus"], "\n") != strings.Join(got["reference"], "\n") {
		t.Errorf("leaf trace: bus %q, reference %q", got["bus"], got["reference"])
	}
}
