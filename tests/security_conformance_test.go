package tests

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// conformanceScenarios are core-protocol behaviours found while securing
// bus (issue 9), run like protocolScenarios against the reference.
// anySid marks a scenario whose deliveries go to a random member of a
// queue group: sids are blanked before comparing.
var conformanceScenarios = []struct {
	name, in string
	anySid   bool
}{
	{"second connect drops subscriptions", quiet + "SUB a 1\r\nSUB b 2\r\n" + quiet + "PUB a 1\r\nx\r\nSUB a 1\r\nPUB a 1\r\ny\r\n", false},
	{"one queue group per name across patterns", quiet + "SUB a.* q 1\r\nSUB a.> q 2\r\nSUB > q 3\r\nSUB a.b r 4\r\nPUB a.b 1\r\nx\r\nPUB a.c 1\r\ny\r\n", true},
	{"reserved publish subjects", quiet + "SUB > 1\r\nPUB _GR_.x 1\r\nx\r\nPUB $GR.x 1\r\nx\r\nPUB $NRG.x 1\r\nx\r\nPUB _GR_. 1\r\nx\r\nPUB $NRGx 1\r\nx\r\n", false},
	{"reserved reply subjects", quiet + "SUB > 1\r\nPUB a _R_.x 1\r\nx\r\nPUB a $JS.ACK.x 1\r\nx\r\nPUB a _GR_.x 1\r\nx\r\nPUB a $GR.x 1\r\nx\r\nPUB a _R_. 1\r\nx\r\nPUB a _INBOX.x 1\r\nx\r\n", false},
	{"reserved publish verbose", "CONNECT {\"verbose\":true}\r\nPUB $NRG.x 1\r\nx\r\nPUB a _R_.y 1\r\nx\r\n", false},
	{"system queue group", quiet + "SUB a _sys_ 1\r\nSUB a _sys 2\r\nPUB a 1\r\nx\r\n", false},
	{"second connect keeps working", quiet + quiet + "SUB a 1\r\nPUB a 1\r\nx\r\n", false},
}

func TestConformanceMatchesReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, server.Options{})
	ref := startReference(t, false)
	for _, sc := range conformanceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := exchange(t, refAddr(ref), sc.in)
			got := exchange(t, bus.Addr().String(), sc.in)
			if sc.anySid {
				want, got = blankSids(want), blankSids(got)
			}
			want, got = normalizeFrames(want), normalizeFrames(got)
			if got != want {
				t.Errorf("bus differs from nats-server\ninput: %q\n  bus: %q\n  ref: %q", clip(sc.in), clip(got), clip(want))
			}
		})
	}
}

// blankSids replaces the sid of every MSG line with "_".
func blankSids(s string) string {
	lines := strings.SplitAfter(s, "\r\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) >= 4 && f[0] == "MSG" {
			f[2] = "_"
			lines[i] = strings.Join(f, " ") + "\r\n"
		}
	}
	return strings.Join(lines, "")
}

// keepalivePings counts the server's PINGs to a client that publishes
// every 50ms for busy, then stays quiet (answering PINGs) for idle.
func keepalivePings(t *testing.T, addr string, busy, idle time.Duration) (duringBusy, duringIdle int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = nc.Write([]byte(s))
	}
	var pings atomic.Int64
	go func() {
		r := bufio.NewReader(nc)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if line == "PING\r\n" {
				pings.Add(1)
				write("PONG\r\n")
			}
		}
	}()
	write(quiet)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(busy); time.Now().Before(end); <-tick.C {
		write("PUB busy 1\r\nx\r\n")
	}
	duringBusy = int(pings.Load())
	time.Sleep(idle) // the quiet period being measured
	return duringBusy, int(pings.Load()) - duringBusy
}

// The keepalive PING goes to a client only when it has not been heard
// from within the interval (after the first, which the reference always
// sends), at the same times as the reference's.
func TestKeepaliveSkipsBusyClientsLikeReference(t *testing.T) {
	t.Parallel()
	const interval = 150 * time.Millisecond
	bus := startBus(t, server.Options{PingInterval: interval, MaxPingsOut: 5})
	ns := startReferenceServer(t, &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, PingInterval: interval, MaxPingsOut: 5})
	var wg sync.WaitGroup
	var got, want [2]int
	wg.Add(2)
	go func() {
		defer wg.Done()
		got[0], got[1] = keepalivePings(t, bus.Addr().String(), 900*time.Millisecond, 700*time.Millisecond)
	}()
	go func() {
		defer wg.Done()
		want[0], want[1] = keepalivePings(t, refAddr(ns), 900*time.Millisecond, 700*time.Millisecond)
	}()
	wg.Wait()
	t.Logf("PINGs while busy/idle: bus %v, reference %v", got, want)
	if got[0] != want[0] {
		t.Errorf("PINGs to a busy client: bus %d, reference %d", got[0], want[0])
	}
	if got[1] < 2 || want[1] < 2 {
		t.Errorf("PINGs to an idle client: bus %d, reference %d; want both at least 2", got[1], want[1])
	}
}
