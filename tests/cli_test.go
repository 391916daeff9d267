package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// natsCLI finds the nats CLI (v0.5.0, installed by .ci/run). Without it
// the CLI tests are skipped, loudly.
func natsCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nats"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "nats")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("nats CLI not installed; .ci/run installs github.com/nats-io/natscli/nats@v0.5.0")
	}
	t.Skip("nats CLI not installed: go install github.com/nats-io/natscli/nats@v0.5.0")
	return ""
}

// runCLI runs one nats CLI command against url and returns its output.
func runCLI(t *testing.T, ctx context.Context, bin, url string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, append([]string{"-s", url, "--no-context"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestNatsCLICore(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	s := startBus(t, server.Options{})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// sub: started first, waits for two messages.
	subOut := make(chan string, 1)
	go func() {
		out, _ := runCLI(t, ctx, bin, url, "sub", "orders.>", "--count", "2")
		subOut <- out
	}()
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions == 1 })
	for _, args := range [][]string{{"pub", "orders.new", "first"}, {"pub", "orders.eu.x", "second", "-H", "K:V"}} {
		if out, err := runCLI(t, ctx, bin, url, args...); err != nil {
			t.Fatalf("nats %v: %v\n%s", args, err, out)
		}
	}
	out := <-subOut
	for _, want := range []string{`Received on "orders.new"`, "first", `Received on "orders.eu.x"`, "K: V", "second"} {
		if !strings.Contains(out, want) {
			t.Fatalf("nats sub output lacks %q:\n%s", want, out)
		}
	}

	// reply + req, and req with nobody listening.
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions == 0 })
	go func() { _, _ = runCLI(t, ctx, bin, url, "reply", "svc.time", "noon", "--count", "1") }()
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions == 1 })
	if out, err := runCLI(t, ctx, bin, url, "req", "svc.time", "now"); err != nil || !strings.Contains(out, "noon") {
		t.Fatalf("nats req: %v\n%s", err, out)
	}
	if out, _ := runCLI(t, ctx, bin, url, "req", "nobody", "x"); !strings.Contains(out, "No responders are available") {
		t.Fatalf("nats req to nobody:\n%s", out)
	}
	if out, err := runCLI(t, ctx, bin, url, "bench", "pub", "bench.s", "--msgs", "10000", "--size", "16", "--no-progress"); err != nil || !strings.Contains(out, "msgs/sec") {
		t.Fatalf("nats bench pub: %v\n%s", err, out)
	}
}

func TestNatsCLIJetStream(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	s := startBus(t, server.Options{JetStream: true})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(want string, args ...string) string {
		t.Helper()
		out, err := runCLI(t, ctx, bin, url, args...)
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(out, want) {
			t.Fatalf("nats %s: output lacks %q:\n%s", strings.Join(args, " "), want, out)
		}
		return out
	}
	run("Messages: 0", "stream", "add", "ORDERS", "--subjects", "orders.>", "--defaults")
	for i := 1; i <= 3; i++ {
		run(fmt.Sprintf("Sequence: %d", i), "pub", "orders.new", fmt.Sprintf("order %d", i), "--jetstream")
	}
	run("Sequence: 4", "pub", "orders.new", "order 4", "--jetstream", "-H", "Nats-Msg-Id:x4")
	run("Stored in Stream: ORDERS Sequence: 4 Duplicate: true", "pub", "orders.new", "order 4", "--jetstream", "-H", "Nats-Msg-Id:x4")
	run("Messages: 4", "stream", "info", "ORDERS")
	run("ORDERS", "stream", "ls")
	run("order 2", "stream", "get", "ORDERS", "2")
	run("orders.new", "stream", "subjects", "ORDERS")
	run("order 4", "stream", "get", "ORDERS", "--last-for", "orders.new")
	run("Pull Mode: true", "consumer", "add", "ORDERS", "C1", "--pull", "--defaults")
	run("order 1", "consumer", "next", "ORDERS", "C1")
	run("Unprocessed Messages: 3", "consumer", "info", "ORDERS", "C1")
	run("C1", "consumer", "ls", "ORDERS")
	run("stats", "bench", "js", "pub", "sync", "bench.s", "--create", "--msgs", "200", "--no-progress")
	run("stats", "bench", "js", "pub", "async", "bench.s", "--msgs", "4000", "--no-progress")
	run("stats", "bench", "js", "pub", "fast", "bench.s", "--msgs", "4000", "--no-progress") // fast batches, API level 4
	run("stats", "bench", "js", "fetch", "--msgs", "2000", "--no-progress")
	run("stats", "bench", "js", "consume", "--msgs", "2000", "--no-progress")
	run("stats", "bench", "js", "ordered", "--msgs", "2000", "--no-progress")
	run("Received JetStream message", "sub", "orders.>", "--stream", "ORDERS", "--all", "--count", "2")
	run("Messages: 0", "stream", "purge", "ORDERS", "-f")
	run("", "consumer", "rm", "ORDERS", "C1", "-f")
	run("", "stream", "rm", "ORDERS", "-f")
	if out, _ := runCLI(t, ctx, bin, url, "stream", "ls", "-n"); strings.Contains(out, "ORDERS") {
		t.Fatalf("stream still listed after rm:\n%s", out)
	}
}
