package tests

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// binDir holds binaries built for the tests; removed when they end.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bus-tests-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(
			// The embedded reference server leaves these behind briefly.
			goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.(*Server).Start.func1"),
			// The reference's source consumer setup waits up to 30s for
			// the create's answer, with no way to stop it (stream.go,
			// trySetupSourceConsumer): one asked through a test's bridge
			// that closed outlives the server.
			goleak.IgnoreAnyFunction("github.com/nats-io/nats-server/v2/server.(*stream).trySetupSourceConsumer.func3"),
			// nats.go v1.55.0: ObjectStore.Put publishes through a
			// short-lived jetStream and cleans it up (object.go:693); when
			// the cleanup clears publisher.connStatusCh before the status
			// goroutine has read it, that goroutine waits on a nil channel
			// for ever (publish.go:570). A client-library race, not ours.
			goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
		); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// eventually polls cond until it holds and fails the test if the timeout
// passes first. Every test that waits for a state goes through here or
// waitFor, not a loop of its own.
func eventually(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	if !waitFor(timeout, cond) {
		t.Fatalf("condition not met within %v", timeout)
	}
}

// waitFor polls cond until it holds or the timeout passes, and reports
// whether it held: for a differential scenario, which records the outcome
// either way instead of failing.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
