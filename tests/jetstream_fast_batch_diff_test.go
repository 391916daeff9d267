package tests

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// fastPub is one raw publish of a fast batch scenario: its subject, the
// reply subject's tail after _F. (<id>.<flow>.<gap>.<seq>.<op>.$FI, or
// anything else), and a header block or "".
type fastPub struct {
	subject, reply, hdr string
}

// fastBatchSteps are the publishes of the scenario, each one step.
var fastBatchSteps = []fastPub{
	// A commit, and an end of batch that is no message.
	{"f.a", "a.10.fail.1.0.$FI", ""}, {"f.a", "a.10.fail.2.1.$FI", ""}, {"f.a", "a.10.fail.3.2.$FI", ""},
	{"f.b", "b.10.fail.1.0.$FI", ""}, {"f.b", "b.10.fail.2.1.$FI", ""}, {"f.b", "b.10.fail.3.3.$FI", ""},
	// Acks after every message, then every second.
	{"f.c", "c.1.fail.1.0.$FI", ""}, {"f.c", "c.1.fail.2.1.$FI", ""}, {"f.c", "c.1.fail.3.1.$FI", ""},
	{"f.c", "c.1.fail.4.2.$FI", ""},
	{"f.c", "c2.2.fail.1.0.$FI", ""}, {"f.c", "c2.2.fail.2.1.$FI", ""}, {"f.c", "c2.2.fail.3.1.$FI", ""},
	{"f.c", "c2.2.fail.4.1.$FI", ""}, {"f.c", "c2.2.fail.5.1.$FI", ""}, {"f.c", "c2.2.fail.6.3.$FI", ""},
	// A gap ends a "fail" batch; an "ok" one goes on.
	{"f.d", "d.10.fail.1.0.$FI", ""}, {"f.d", "d.10.fail.3.1.$FI", ""},
	{"f.e", "e.10.ok.1.0.$FI", ""}, {"f.e", "e.10.ok.3.1.$FI", ""}, {"f.e", "e.10.ok.4.2.$FI", ""},
	// Pings: where the batch stands, and a ping past it.
	{"f.p", "p.10.fail.1.0.$FI", ""}, {"f.p", "p.10.fail.1.4.$FI", ""}, {"f.p", "p.10.fail.5.4.$FI", ""},
	{"f.p", "p2.10.ok.1.0.$FI", ""}, {"f.p", "p2.10.ok.4.4.$FI", ""}, {"f.p", "p2.10.ok.5.3.$FI", ""},
	// Refusals of the pattern and of the batch.
	{"f.x", "x.10.fail.2.1.$FI", ""}, {"f.x", "x.$FI", ""}, {"f.x", "x.10.fail.1.9.$FI", ""},
	{"f.x", "x.10.maybe.1.0.$FI", ""}, {"f.x", "x.10.fail.0.0.$FI", ""}, {"f.x", "x.10.fail.1.3.$FI", ""},
	{"f.x", strings.Repeat("i", 65) + ".10.fail.1.0.$FI", ""}, {"n.x", "n.10.fail.1.0.$FI", ""},
	{"f.a", "a.10.fail.4.1.$FI", ""},
	// A duplicate counts but is not stored; refused messages.
	{"f.k", "k.10.fail.1.0.$FI", "NATS/1.0\r\nNats-Msg-Id: m1\r\n\r\n"},
	{"f.k", "k.10.fail.2.1.$FI", "NATS/1.0\r\nNats-Msg-Id: m1\r\n\r\n"},
	{"f.k", "k.10.fail.3.2.$FI", ""},
	{"f.l", "l.10.fail.1.0.$FI", ""},
	{"f.l", "l.10.fail.2.1.$FI", "NATS/1.0\r\nNats-Expected-Last-Sequence: 999\r\n\r\n"},
	{"f.l", "l.10.fail.3.1.$FI", ""},
	{"f.m", "m.10.fail.1.0.$FI", "NATS/1.0\r\nNats-Expected-Last-Sequence: 999\r\n\r\n"},
	{"f.m", "m2.10.ok.1.0.$FI", ""},
	{"f.m", "m2.10.ok.2.1.$FI", "NATS/1.0\r\nNats-Expected-Last-Sequence: 999\r\n\r\n"},
	{"f.m", "m2.10.ok.3.2.$FI", ""},
	{"f.r", "r.10.fail.1.0.$FI", "NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n"},
	{"f.r", "r2.10.fail.1.2.$FI", "NATS/1.0\r\nNats-Required-Api-Level: 1\r\n\r\n"},
	// A store refusal (max_msgs with discard new) ends a "fail" batch:
	// what was published behind it is not stored.
	{"l.x", "z.10.fail.1.0.$FI", ""}, {"l.x", "z.10.fail.2.1.$FI", ""}, {"l.x", "z.10.fail.3.1.$FI", ""},
	{"l.x", "z.10.fail.4.1.$FI", ""}, {"l.x", "z.10.fail.5.1.$FI", ""}, {"l.x", "z.10.fail.6.2.$FI", ""},
}

// fastBatchScenario publishes fastBatchSteps on a raw connection and
// returns, step by step, what came back (reply subjects and bodies).
// counts, when given, is how many answers each step gets (learned from
// the reference); otherwise a step ends after a quiet moment.
func fastBatchScenario(t *testing.T, url, addr string, counts []int) ([]string, []int) {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	var out []string
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "F", Subjects: []string{"f.>"}, AllowBatchPublish: true})
	out = append(out, o)
	_, o = createOutcome(ctx, js, jetstream.StreamConfig{Name: "N", Subjects: []string{"n.>"}})
	out = append(out, o)
	_, o = createOutcome(ctx, js, jetstream.StreamConfig{Name: "L", Subjects: []string{"l.>"}, MaxMsgs: 3,
		Discard: jetstream.DiscardNew, AllowBatchPublish: true})
	out = append(out, o)
	rc := dialRaw(t, addr)
	rc.send("CONNECT {\"verbose\":false,\"headers\":true,\"protocol\":1}\r\nSUB _F.> 1\r\nPING\r\n")
	for rc.line() != "PONG\r\n" {
	}
	var got []int
	for i, p := range fastBatchSteps {
		reply := "_F." + p.reply
		if p.hdr == "" {
			rc.send(fmt.Sprintf("PUB %s %s 1\r\nx\r\n", p.subject, reply))
		} else {
			rc.send(fmt.Sprintf("HPUB %s %s %d %d\r\n%sx\r\n", p.subject, reply, len(p.hdr), len(p.hdr)+1, p.hdr))
		}
		n := 0
		for counts == nil || n < counts[i] {
			if counts == nil && !frameWithin(t, rc, 250*time.Millisecond) {
				break
			}
			subject, _, data := readFrame(t, rc)
			out = append(out, fmt.Sprintf("%s %s -> %s %s", p.subject, p.reply, subject, data))
			n++
		}
		got = append(got, n)
	}
	if counts != nil && frameWithin(t, rc, 250*time.Millisecond) {
		subject, _, data := readFrame(t, rc)
		out = append(out, fmt.Sprintf("more -> %s %s", subject, data))
	}
	for _, name := range []string{"F", "N", "L"} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: %d msgs, last seq %d", name, info.State.Msgs, info.State.LastSeq))
	}
	return out, got
}

// frameWithin reports whether a message arrives within d, answering
// the server's pings and skipping INFO updates meanwhile.
func frameWithin(t *testing.T, rc *rawConn, d time.Duration) bool {
	t.Helper()
	for {
		_ = rc.nc.SetReadDeadline(time.Now().Add(d))
		op, err := rc.r.Peek(4)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return false
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		switch string(op) {
		case "PING":
			rc.line()
			rc.send("PONG\r\n")
		case "INFO":
			rc.line()
		default:
			return true
		}
	}
}

// TestFastBatchMatchesReference: fast batch publishes (allow_batched,
// ADR-50) get the reference's answers, in order and byte for byte: the
// first flow ack, flow acks and their ramp, gaps in both modes, pings,
// the commit's and the end of batch's pub acks, duplicates, refused
// messages, and the refusals of patterns, ids, unknown batches and
// streams that do not allow them; and the same messages are stored.
// Issue 28.
func TestFastBatchMatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReference(t, true)
	want, counts := fastBatchScenario(t, "nats://"+refAddr(ref), refAddr(ref), nil)
	s := startBus(t, server.Options{JetStream: true})
	got, _ := fastBatchScenario(t, busURL(s), s.Addr().String(), counts)
	sameOutcomes(t, want, got)
}
