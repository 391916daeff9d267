package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// readmeBusDLQ are the indented `bus dlq …` lines of "Dead letters:
// inspect and redrive", split as a shell would, without "bus dlq".
func readmeBusDLQ(t *testing.T) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range strings.Split(readmeSection(t, "### Dead letters: inspect and redrive"), "\n") {
		if rest, ok := strings.CutPrefix(line, "    bus dlq "); ok {
			cmds = append(cmds, shellWords(t, rest))
		}
	}
	if len(cmds) == 0 {
		t.Fatal("no bus dlq commands under Dead letters")
	}
	return cmds
}

// The README's dead-letter steps after its JetStream steps, on one fresh
// bus: the README's billing consumer gives up on ten orders (each NAKed
// through its back-off), then every `bus dlq` line runs in order, with
// $NATS_URL naming the bus (as the nats CLI reads it); before the
// --keep line, which the --consumer line left nothing for, billing gives
// up on the redriven ten again. The `--context
// prod` line gets a context saved by `nats context save`; the TLS line
// runs against the Security section's bus (startSecuredBus), its tls/
// files and address replaced by the test's.
func TestReadmeDeadLettersWalk(t *testing.T) {
	t.Parallel()
	nats := natsCLI(t)
	s := startBus(t, server.Options{JetStream: true})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, args := range readmeJetStreamSteps(t) {
		if out, err := runCLI(t, ctx, nats, url, args...); err != nil {
			t.Fatalf("nats %q: %v\n%s", args, err, out)
		}
	}
	js, err := jetstream.New(connect(t, url))
	if err != nil {
		t.Fatal(err)
	}
	const orders = 10
	for i := 0; i < orders; i++ {
		if _, err := js.Publish(ctx, "orders.new", []byte(`{"id":2}`)); err != nil {
			t.Fatal(err)
		}
	}
	billing, err := js.Consumer(ctx, "ORDERS", "billing")
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := js.Stream(ctx, "DLQ")
	if err != nil {
		t.Fatal(err)
	}
	dlqCount := func() uint64 {
		t.Helper()
		info, err := dlq.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	// giveUp NAKs every delivery of billing's until the DLQ holds orders.
	giveUp := func() {
		t.Helper()
		for dlqCount() < orders {
			if ctx.Err() != nil {
				t.Fatalf("billing gave up on %d of %d orders", dlqCount(), orders)
			}
			batch, err := billing.Fetch(orders, jetstream.FetchMaxWait(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for m := range batch.Messages() {
				if err := m.Nak(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	storedOrders := func() uint64 {
		t.Helper()
		st, err := js.Stream(ctx, "ORDERS")
		if err != nil {
			t.Fatal(err)
		}
		return st.CachedInfo().State.Msgs
	}
	giveUp()

	env := []string{"NATS_URL=" + url, "XDG_CONFIG_HOME=" + t.TempDir()}
	ctxEnv := env[1]
	save := exec.CommandContext(ctx, nats, "context", "save", "prod", "--server", url)
	save.Env = append(os.Environ(), ctxEnv)
	if out, err := save.CombinedOutput(); err != nil {
		t.Fatalf("nats context save prod: %v\n%s", err, out)
	}
	for _, args := range readmeBusDLQ(t) {
		runEnv := env
		if i := slices.Index(args, "-s"); i >= 0 && i+1 < len(args) {
			b := startSecuredBus(t)
			r := strings.NewReplacer(args[i+1], b.url, "tls/ca.pem", b.ca.file, "tls/client.pem", b.cert, "tls/client-key.pem", b.key)
			for j := range args {
				args[j] = r.Replace(args[j])
			}
			runEnv = []string{ctxEnv}
		}
		keep := slices.Contains(args, "--keep")
		before := storedOrders()
		if keep {
			giveUp() // the --consumer line emptied the DLQ; billing fills it again
		}
		r := runDLQ(t, runEnv, args...)
		if r.code != 0 {
			t.Fatalf("bus dlq %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
		switch {
		case args[0] == "ls" && !strings.Contains(r.stdout, "SEQ"):
			t.Errorf("bus dlq %q lists nothing:\n%s", args, r.stdout)
		case slices.Contains(args, "--seq"):
			if _, err := dlq.GetMsg(ctx, 7); !errors.Is(err, jetstream.ErrMsgNotFound) {
				t.Errorf("after bus dlq %q, DLQ seq 7 is still there (%v)", args, err)
			}
		case keep:
			if n, stored := dlqCount(), storedOrders(); n != orders || stored != before+orders {
				t.Errorf("after bus dlq %q, DLQ holds %d (want %d kept) and ORDERS %d (want %d, a copy of each back)", args, n, orders, stored, before+orders)
			}
		case slices.Contains(args, "--consumer"):
			if n := dlqCount(); n != 0 {
				t.Errorf("after bus dlq %q, DLQ holds %d", args, n)
			}
		}
	}
}
