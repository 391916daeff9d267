package tests

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var batchKill9Cycles = flag.Int("batchkill9.cycles", 8, "kill -9 cycles of TestAtomicBatchKill9")

// batchKill9Size is the number of messages of each batch.
const batchKill9Size = 5

// TestAtomicBatchKill9 kills the bus process with SIGKILL while
// publishers commit atomic batches whose first message rolls the stream
// up (Nats-Rollup: all), and checks after each restart that the stream
// holds exactly one whole batch, the last one stored: a commit cut by the
// kill is there whole, rollup included, or not at all; never a batch
// beside the one it rolled up, nor part of one. Every acknowledged commit
// is at or below the stream's last seq.
func TestAtomicBatchKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 28))
	var high uint64 // highest acknowledged commit
	for cycle := range *batchKill9Cycles {
		cmd, url := startBusProcess(t, dir)
		nc, err := nats.Connect(url, nats.MaxReconnects(0))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "AB", Subjects: []string{"ab.>"}, AllowAtomicPublish: true, AllowRollup: true})
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		if cycle > 0 {
			checkOneWholeBatch(ctx, t, cycle, st, high)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for p := range 2 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					seq, ok := commitRollupBatch(nc, fmt.Sprintf("c%d-p%d-%d", cycle, p, i))
					if !ok {
						return // the server is gone
					}
					mu.Lock()
					high = max(high, seq)
					mu.Unlock()
				}
			})
		}
		time.Sleep(time.Duration(20+rng.IntN(130)) * time.Millisecond) // the moment of the kill is what is tested
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		close(stop)
		nc.Close()
		wg.Wait()
		cancel()
	}
}

// commitRollupBatch publishes one batch tagged tag and returns the seq
// its commit was acked with; false once the server is gone.
func commitRollupBatch(nc *nats.Conn, tag string) (uint64, bool) {
	for i := 1; i <= batchKill9Size; i++ {
		m := nats.NewMsg(fmt.Sprintf("ab.%d", i))
		m.Data = []byte(fmt.Sprintf("%s/%d", tag, i))
		m.Header.Set("Nats-Batch-Id", tag)
		m.Header.Set("Nats-Batch-Sequence", fmt.Sprint(i))
		if i == 1 {
			m.Header.Set("Nats-Rollup", "all")
		}
		if i == batchKill9Size {
			m.Header.Set("Nats-Batch-Commit", "1")
		}
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			return 0, false
		}
		if i < batchKill9Size {
			continue
		}
		var ack rawAck
		if err := json.Unmarshal(r.Data, &ack); err != nil || ack.Error != nil || ack.Count != batchKill9Size {
			return 0, false
		}
		return ack.Seq, true
	}
	return 0, false
}

// checkOneWholeBatch is the check after a restart.
func checkOneWholeBatch(ctx context.Context, t *testing.T, cycle int, st jetstream.Stream, high uint64) {
	t.Helper()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	s := info.State
	if s.LastSeq < high {
		t.Fatalf("cycle %d: last seq %d below the acknowledged commit %d", cycle, s.LastSeq, high)
	}
	if s.Msgs == 0 && high == 0 {
		return // nothing committed yet
	}
	if s.Msgs != batchKill9Size || s.FirstSeq+batchKill9Size-1 != s.LastSeq {
		t.Fatalf("cycle %d: stream holds %d messages at %d..%d, want one batch of %d", cycle, s.Msgs, s.FirstSeq, s.LastSeq, batchKill9Size)
	}
	var tag string
	for i := range uint64(batchKill9Size) {
		m, err := st.GetMsg(ctx, s.FirstSeq+i)
		if err != nil {
			t.Fatalf("cycle %d: seq %d: %v", cycle, s.FirstSeq+i, err)
		}
		got, n, _ := strings.Cut(string(m.Data), "/")
		if i == 0 {
			tag = got
		}
		if got != tag || n != fmt.Sprint(i+1) {
			t.Fatalf("cycle %d: seq %d holds %q, want %s/%d", cycle, s.FirstSeq+i, m.Data, tag, i+1)
		}
	}
}

// rollupBatchRestartScenario commits atomic batches that roll up (all,
// then per subject) and lists what the stream holds before and after a
// restart.
func rollupBatchRestartScenario(t *testing.T, url string, restart func()) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "RB", Subjects: []string{"rb.>"}, AllowAtomicPublish: true, AllowRollup: true})
	out := []string{o}
	nc := connect(t, url)
	pub := func(what, subject, data string, kv ...string) {
		out = append(out, what+": "+rawPublish(nc, subject, data, kv...))
	}
	id, seq, commit := "Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit"
	for i := range 3 {
		pub("plain", fmt.Sprintf("rb.%d", i%2), "old")
	}
	pub("all one", "rb.0", "a1", id, "all", seq, "1", "Nats-Rollup", "all")
	pub("all two", "rb.1", "a2", id, "all", seq, "2", commit, "1")
	pub("plain again", "rb.0", "p")
	pub("sub one", "rb.0", "s1", id, "sub", seq, "1", "Nats-Rollup", "sub")
	pub("sub two", "rb.2", "s2", id, "sub", seq, "2", commit, "1")
	out = append(out, "before: "+storedMsgs(t, js, "RB", "Nats-Rollup"))
	nc.Close()
	restart()
	js, _ = scenarioJS(t, url, 30*time.Second)
	out = append(out, "after: "+storedMsgs(t, js, "RB", "Nats-Rollup"))
	return out
}

func TestRollupBatchRestartMatchesReference(t *testing.T) {
	t.Parallel()
	sameAcrossRestart(t, rollupBatchRestartScenario)
}
