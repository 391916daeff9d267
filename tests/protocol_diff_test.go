package tests

import (
	"errors"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// quiet is the CONNECT most scenarios start with: no +OK noise.
const quiet = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\n"

// protocolScenarios are byte-exact client inputs. Each runs against bus and
// the reference server; everything the server sends back (INFO lines
// aside) and whether it closed the connection must be identical.
var protocolScenarios = []struct {
	name, in string
}{
	{"wildcards fan out", quiet + "SUB foo.* 1\r\nSUB foo.> 2\r\nSUB > 3\r\nSUB foo.bar 4\r\nPUB foo.bar 5\r\nhello\r\n"},
	{"full wildcard needs a token", quiet + "SUB foo.> 1\r\nPUB foo 2\r\nhi\r\nPUB foo.a.b 2\r\nhi\r\n"},
	{"reply subject", quiet + "SUB svc 1\r\nPUB svc inbox.1 2\r\nhi\r\n"},
	{"headers", quiet + "SUB a 1\r\nHPUB a r 24 26\r\nNATS/1.0\r\nX-Trace: 1\r\n\r\nhi\r\n"},
	{"headers without reply", quiet + "SUB a 1\r\nHPUB a 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
	{"zero payload", quiet + "SUB a 1\r\nPUB a 0\r\n\r\n"},
	{"verbose by default before connect", "SUB a 1\r\nPUB a 1\r\nx\r\n"},
	{"connect without keys is verbose", "CONNECT {}\r\nSUB a 1\r\nPUB a 1\r\nx\r\nUNSUB 1\r\n"},
	{"ping before connect", "PING\r\n"},
	{"lower case ops", "connect {\"verbose\":false}\r\nsub a 1\r\npub a 2\r\nhi\r\nping\r\n"},
	{"tabs and extra spaces", quiet + "SUB\ta  \t 1\r\nPUB \t a\t2 \r\nhi\r\n"},
	{"bare newlines", quiet + "SUB a 1\nPUB a 2\nhi\r\nPING\n"},
	{"queue group and plain", quiet + "SUB q.* workers 1\r\nSUB q.* 2\r\nPUB q.x 1\r\nx\r\n"},
	{"queue group of one", quiet + "SUB q workers 1\r\nSUB q others 2\r\nPUB q 1\r\nx\r\n"},
	{"duplicate sid keeps first", quiet + "SUB a 1\r\nSUB b 1\r\nPUB b 1\r\nx\r\nPUB a 1\r\ny\r\n"},
	{"unsub", quiet + "SUB a 1\r\nUNSUB 1\r\nPUB a 1\r\nx\r\n"},
	{"unsub unknown sid", quiet + "UNSUB 99\r\n"},
	{"auto unsubscribe", quiet + "SUB a 1\r\nUNSUB 1 2\r\nPUB a 1\r\nx\r\nPUB a 1\r\ny\r\nPUB a 1\r\nz\r\n"},
	{"auto unsubscribe after deliveries", quiet + "SUB a 1\r\nPUB a 1\r\nx\r\nUNSUB 1 1\r\nPUB a 1\r\ny\r\n"},
	{"unsub max zero", quiet + "SUB a 1\r\nUNSUB 1 0\r\nPUB a 1\r\ny\r\n"},
	{"no responders", quiet + "SUB _INBOX.demo.* 3\r\nPUB nobody.listens _INBOX.demo.r1 0\r\n\r\n"},
	{"no responders needs own sub", quiet + "PUB nobody _INBOX.x 0\r\n\r\n"},
	{"no responders not requested", "CONNECT {\"verbose\":false,\"headers\":true}\r\nSUB _INBOX.* 1\r\nPUB nobody _INBOX.x 0\r\n\r\n"},
	{"echo off", "CONNECT {\"verbose\":false,\"echo\":false}\r\nSUB a 1\r\nPUB a 1\r\nx\r\n"},
	{"invalid subject stays open", quiet + "SUB foo..bar 1\r\nSUB .foo 2\r\nSUB foo. 3\r\nSUB foo.>.bar 4\r\nSUB fo*.b> 5\r\nPUB fo*.b> 1\r\nx\r\n"},
	{"pedantic publish subject", "CONNECT {\"verbose\":false,\"pedantic\":true}\r\nSUB > 1\r\nPUB foo.* 1\r\nx\r\n"},
	{"literal wildcard publish", quiet + "SUB > 1\r\nSUB foo.* 2\r\nPUB foo.* 1\r\nx\r\nPUB foo.> 1\r\ny\r\n"},
	{"invalid publish subject is dropped", quiet + "SUB > 1\r\nPUB foo..bar 1\r\nx\r\n"},
	{"client info and ok ignored", quiet + "INFO {}\r\n+OK\r\nPONG\r\n"},
	{"unknown op", quiet + "BOGUS\r\n"},
	{"unknown op mid word", quiet + "PUX a 1\r\n"},
	{"empty line", quiet + "\r\n"},
	{"client msg", quiet + "MSG a 1 1\r\nx\r\n"},
	{"client err", quiet + "-ERR 'x'\r\n"},
	{"unsub without args", quiet + "UNSUB\r\n"},
	{"pub without args", quiet + "PUB\r\n"},
	{"payload not followed by crlf", quiet + "PUB a 2\r\nhiX\r\n"},
	{"pub too many args", quiet + "PUB a b c 1\r\nx\r\n"},
	{"pub bad size", quiet + "PUB a x\r\n"},
	{"pub negative size", quiet + "PUB a -1\r\n"},
	{"sub missing sid", quiet + "SUB a\r\n"},
	{"sub too many args", quiet + "SUB a b c d\r\n"},
	{"unsub bad max", quiet + "SUB a 1\r\nUNSUB 1 x\r\n"},
	{"hpub header larger than total", quiet + "HPUB a 10 5\r\n"},
	{"hpub without headers", "CONNECT {\"verbose\":false}\r\nHPUB a 12 12\r\nNATS/1.0\r\n\r\n\r\n"},
	{"max payload", quiet + "PUB a 1048577\r\n"},
	{"max payload exactly", quiet + "SUB a 1\r\nPUB a 1048576\r\n" + strings.Repeat("x", 1048576) + "\r\n"},
	{"max control line", quiet + "SUB " + strings.Repeat("a", 5000) + " 1\r\n"},
	{"long control line under limit", quiet + "SUB " + strings.Repeat("a", 4000) + " 1\r\n"},
	{"bad connect json", "CONNECT {nope\r\n"},
	{"bad protocol", "CONNECT {\"verbose\":false,\"protocol\":2}\r\n"},
	{"no responders without headers", "CONNECT {\"verbose\":false,\"no_responders\":true}\r\n"},
	{"second connect", quiet + "CONNECT {\"verbose\":true}\r\nPING\r\n"},
	{"ping with trailing junk", quiet + "PING junk\r\n"},
}

func TestProtocolMatchesReference(t *testing.T) {
	bus := startBus(t, server.Options{})
	ref := startReference(t, false)
	for _, sc := range protocolScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := normalizeFrames(exchange(t, refAddr(ref), sc.in))
			got := normalizeFrames(exchange(t, bus.Addr().String(), sc.in))
			if got != want {
				t.Errorf("bus differs from nats-server\ninput: %q\n  bus: %q\n  ref: %q", clip(sc.in), clip(got), clip(want))
			}
		})
	}
}

// exchange sends in followed by a PING sentinel and returns everything the
// server answered except INFO lines, plus "<closed>" if it hung up.
func exchange(t *testing.T, addr, in string) string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer nc.Close()
	in += "PING\r\n"
	// Every line the server reads as a PING gets a PONG: the op and
	// anything after it up to the newline (the reference's parser skips
	// "PING junk" to its newline). Waiting for them all keeps the answer
	// from depending on how the PONGs were split across reads.
	pings := 0
	for _, line := range strings.Split(strings.ToUpper(in), "\n") {
		if strings.HasPrefix(line, "PING") {
			pings++
		}
	}
	go func() { _, _ = nc.Write([]byte(in)) }() // large inputs would block a full socket
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var raw []byte
	buf := make([]byte, 64*1024)
	for {
		n, err := nc.Read(buf)
		raw = append(raw, buf[:n]...)
		out := stripInfo(string(raw))
		if strings.Count(out, "PONG\r\n") >= pings && strings.HasSuffix(out, "PONG\r\n") {
			return out
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("no answer within 5s; got %q", clip(out))
			}
			if !errors.Is(err, io.EOF) && !isReset(err) {
				t.Logf("read: %v", err)
			}
			return out + "<closed>"
		}
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// stripInfo drops INFO lines, whose ids and ports differ by nature.
func stripInfo(s string) string {
	var sb strings.Builder
	for len(s) > 0 {
		i := strings.Index(s, "\r\n")
		if i < 0 {
			sb.WriteString(s)
			break
		}
		line := s[:i+2]
		s = s[i+2:]
		if !strings.HasPrefix(line, "INFO ") {
			sb.WriteString(line)
		}
	}
	return sb.String()
}

// normalizeFrames sorts each run of consecutive MSG/HMSG frames: the
// order in which one message reaches a connection's several matching
// subscriptions is not part of the protocol.
func normalizeFrames(s string) string {
	var out, run []string
	flush := func() {
		sort.Strings(run)
		out = append(out, run...)
		run = run[:0]
	}
	for len(s) > 0 {
		i := strings.Index(s, "\r\n")
		if i < 0 {
			flush()
			out = append(out, s)
			break
		}
		line := s[:i+2]
		s = s[i+2:]
		if !strings.HasPrefix(line, "MSG ") && !strings.HasPrefix(line, "HMSG ") {
			flush()
			out = append(out, line)
			continue
		}
		fields := strings.Fields(line)
		size, _ := strconv.Atoi(fields[len(fields)-1])
		if size+2 > len(s) {
			size = len(s) - 2
		}
		run = append(run, line+s[:size+2])
		s = s[size+2:]
	}
	flush()
	return strings.Join(out, "")
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
