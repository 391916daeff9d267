package jetlog

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// powerLossRounds is the number of crash points per mode (a quarter of
// them are reopened and checked); JETLOG_LONG=1 multiplies it.
func powerLossRounds() int {
	switch {
	case os.Getenv("JETLOG_LONG") != "":
		return 6000
	case raceEnabled:
		return 1000
	}
	return 2000
}

// TestPowerLoss crashes a MemFS at random points while writers append
// concurrently, then checks that recovery keeps everything it promised:
// in always mode every acknowledged append, in interval mode every append
// up to the durable seq taken before the crash.
func TestPowerLoss(t *testing.T) {
	for _, mode := range []Durability{DurabilityAlways, DurabilityInterval} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			testPowerLoss(t, mode, nil, powerLossRounds())
		})
	}
}

// testPowerLoss runs rounds crash points in mode, encrypted with keys
// unless nil.
func testPowerLoss(t *testing.T, mode Durability, keys *Keyring, rounds int) {
	fsys := vfs.NewMemFS()
	cfg := StreamConfig{Name: "S", Durability: mode, SyncInterval: 2 * time.Millisecond}
	opts := Options{FS: fsys, SegmentSize: 2048, Keys: keys}
	l, err := Open("/s", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[uint64]string{} // seq -> data; entries never change
	var maxAcked uint64
	stop := make(chan struct{})
	// Each crash round lets the writers make a bounded number of appends,
	// so the log (and the cost of each check) stays small.
	tickets := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-tickets:
				}
				data := fmt.Sprintf("w%d-%d", w, i)
				ack, err := l.Append(Msg{Subject: "p." + strconv.Itoa(w), Data: []byte(data)}, Expect{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[ack.Seq] = data
				maxAcked = max(maxAcked, ack.Seq)
				mu.Unlock()
			}
		})
	}
	lookup := func(seq uint64) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		d, ok := acked[seq]
		return d, ok
	}
	rng := rand.New(rand.NewPCG(7, uint64(len(mode))))
	for round := range rounds {
		for range 3 {
			select {
			case tickets <- struct{}{}:
			default:
			}
		}
		// Acks observed before the crash must survive it.
		mu.Lock()
		must := maxAcked
		mu.Unlock()
		if mode != DurabilityAlways {
			must = l.DurableSeq()
		}
		crashed := fsys.CrashClone(rng)
		if round%4 == 0 || round == rounds-1 {
			checkCrashed(t, crashed, cfg, opts, must, lookup)
		}
		if t.Failed() {
			break
		}
	}
	close(stop)
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkCrashed opens a crashed copy and checks that seqs 1..must are all
// there (the stream is contiguous from 1: nothing is ever deleted here)
// and that every surviving message holds what was appended.
func checkCrashed(t *testing.T, fsys *vfs.MemFS, cfg StreamConfig, opts Options, must uint64, lookup func(uint64) (string, bool)) {
	t.Helper()
	opts.FS = fsys
	l, err := Open("/s", cfg, opts)
	if err != nil {
		t.Fatalf("Open after crash: %v", err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if rep := l.Recovery(); len(rep.Corrupt) != 0 {
		t.Fatalf("power loss produced corruption: %+v", rep.Corrupt)
	}
	// A torn tail above must (interval mode: maybe acknowledged) is
	// reported and its seqs are not used again; nothing else is missing.
	var lost uint64
	for _, x := range l.Recovery().Losses {
		if x.First <= must || x.Reason != "torn tail" {
			t.Fatalf("loss %+v, with %d acknowledged durably", x, must)
		}
		if x.Acked != LossNotAcked {
			lost += x.Last - x.First + 1
		}
	}
	st := l.State()
	if st.LastSeq < must || (st.Msgs > 0 && (st.FirstSeq != 1 || st.NumDeleted != lost || st.Msgs+lost != st.LastSeq)) {
		t.Fatalf("acknowledged seqs up to %d not all recovered: state %+v, lost %d", must, st, lost)
	}
	for m, err := range l.Messages(0) {
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := lookup(m.Seq); ok && w != string(m.Data) {
			t.Fatalf("seq %d = %q, want %q", m.Seq, m.Data, w)
		}
	}
	ack, err := l.Append(Msg{Subject: "after"}, Expect{})
	if err != nil || ack.Seq != st.LastSeq+1 {
		t.Fatalf("append after recovery = %+v, %v", ack, err)
	}
}
