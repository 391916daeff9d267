package tests

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var kill9Cycles = flag.Int("kill9.cycles", 50, "kill -9 cycles of TestKill9Loop (the documented long run: 1000)")

// TestKill9Loop kills the bus process with SIGKILL at random moments
// while publishers and a consumer work, restarts it on the same store, and
// checks after every cycle that nothing acknowledged was lost: every
// publish that got an ack is stored with its payload, sequences never go
// back, and no message whose ack was confirmed is delivered again.
//
//	go test ./tests -run TestKill9Loop -kill9.cycles 1000 -timeout 2h
func TestKill9Loop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	acked := map[uint64]string{}   // seq -> payload, of every acknowledged publish
	confirmed := map[uint64]bool{} // seqs whose ack the server confirmed
	var high uint64                // highest acknowledged seq
	for cycle := range *kill9Cycles {
		cmd, url := startBusProcess(t, dir)
		nc, err := nats.Connect(url, nats.MaxReconnects(0))
		if err != nil {
			t.Fatal(err)
		}
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "K", Subjects: []string{"k.>"}})
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour})
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		if cycle > 0 {
			checkAfterKill(ctx, t, cycle, st, c, acked, confirmed, high)
		}

		// Work until the kill: publishers record what was acked, the
		// consumer what was confirmed.
		var mu sync.Mutex
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for p := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					payload := fmt.Sprintf("c%d-p%d-%d", cycle, p, i)
					ack, err := js.Publish(ctx, fmt.Sprintf("k.%d", i%5), []byte(payload))
					if err != nil {
						return // the server is gone
					}
					mu.Lock()
					acked[ack.Sequence] = payload
					high = max(high, ack.Sequence)
					mu.Unlock()
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b, err := c.Fetch(10, jetstream.FetchMaxWait(50*time.Millisecond))
				if err != nil {
					return
				}
				for m := range b.Messages() {
					meta, err := m.Metadata()
					if err != nil || m.DoubleAck(ctx) != nil {
						return
					}
					mu.Lock()
					confirmed[meta.Sequence.Stream] = true
					mu.Unlock()
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
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
	t.Logf("%d kill -9 cycles, %d acknowledged publishes, %d confirmed acks", *kill9Cycles, len(acked), len(confirmed))
}

// checkAfterKill is the check after a restart.
func checkAfterKill(ctx context.Context, t *testing.T, cycle int, st jetstream.Stream, c jetstream.Consumer,
	acked map[uint64]string, confirmed map[uint64]bool, high uint64) {
	t.Helper()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("cycle %d: %v", cycle, err)
	}
	if info.State.LastSeq < high {
		t.Fatalf("cycle %d: last seq %d went below the acknowledged %d", cycle, info.State.LastSeq, high)
	}
	// Every acknowledged publish of the last run (and a sample of older
	// ones) is there with its payload.
	for seq, payload := range acked {
		if seq+200 < high && seq%17 != 0 {
			continue
		}
		m, err := st.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != payload {
			t.Fatalf("cycle %d: acknowledged seq %d (%q) lost: %v", cycle, seq, payload, err)
		}
	}
	// Nothing confirmed comes back.
	b, err := c.Fetch(100, jetstream.FetchMaxWait(100*time.Millisecond))
	if err != nil && !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("cycle %d: fetch: %v", cycle, err)
	}
	for m := range b.Messages() {
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if confirmed[meta.Sequence.Stream] {
			t.Fatalf("cycle %d: seq %d delivered again after its ack was confirmed", cycle, meta.Sequence.Stream)
		}
		_ = m.Nak()
	}
}
