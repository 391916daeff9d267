package jetlog

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// One goroutine's asynchronous appends are stored, and their callbacks
// called, in the order it made them.
func TestAppendAsyncOrder(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{AppendQueue: 8})
		const n = 2000
		var got []uint64 // appended only by callbacks, which run one at a time
		var wg sync.WaitGroup
		wg.Add(n)
		done := func(ack PubAck, err error) {
			if err != nil {
				t.Error(err)
			}
			got = append(got, ack.Seq)
			wg.Done()
		}
		for i := range n {
			l.AppendAsync(Msg{Subject: fmt.Sprintf("o.%d", i%7), Data: fmt.Appendf(nil, "%d", i)}, Expect{}, done)
		}
		wg.Wait()
		for i, seq := range got {
			if seq != uint64(i+1) {
				t.Fatalf("callback %d got seq %d", i, seq)
			}
		}
		for i := range n {
			if m := mustGet(t, l, uint64(i+1)); string(m.Data) != fmt.Sprint(i) {
				t.Fatalf("seq %d holds %q", i+1, m.Data)
			}
		}
	})
}

// A refusal goes to its own callback; the messages around it are stored.
func TestAppendAsyncRefusalsArePerMessage(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "S", MaxMsgs: 4, Discard: DiscardNew, MaxMsgSize: 8}, Options{})
	type result struct {
		ack PubAck
		err error
	}
	msgs := []Msg{
		{Subject: "a", Data: []byte("1")},
		{Subject: "bad..subject", Data: []byte("2")},
		{Subject: "a", Data: []byte("too large!")},
		{Subject: "a", Data: []byte("3")},
		{Subject: "a", Data: []byte("4")},
		{Subject: "a", Data: []byte("5")},
		{Subject: "a", Data: []byte("6")},
	}
	want := []error{nil, ErrBadSubject, ErrMsgTooLarge, nil, nil, nil, ErrMaxMsgs}
	results := make([]result, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		wg.Add(1)
		l.AppendAsync(m, Expect{}, func(ack PubAck, err error) {
			results[i] = result{ack, err}
			wg.Done()
		})
	}
	wg.Wait()
	seq := uint64(0)
	for i, r := range results {
		if !errors.Is(r.err, want[i]) || (want[i] == nil) != (r.err == nil) {
			t.Errorf("message %d: err %v, want %v", i, r.err, want[i])
		}
		if r.err == nil {
			seq++
			if r.ack.Seq != seq {
				t.Errorf("message %d: seq %d, want %d", i, r.ack.Seq, seq)
			}
		}
	}
	if st := l.State(); st.Msgs != 4 {
		t.Fatalf("state %+v", st)
	}
}

// In always mode the callback runs only once the message is durable: a
// power cut taken inside the callback keeps it.
func TestAppendAsyncCallbackAfterFsync(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	const n = 50
	clones := make([]*vfs.MemFS, n)
	seqs := make([]uint64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		l.AppendAsync(Msg{Subject: "d", Data: []byte{byte(i)}}, Expect{}, func(ack PubAck, err error) {
			defer wg.Done()
			if err != nil {
				t.Error(err)
				return
			}
			seqs[i], clones[i] = ack.Seq, fsys.CrashClone(nil)
		})
	}
	wg.Wait()
	for i := range n {
		if clones[i] == nil {
			t.Fatal("missing callback")
		}
		c := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: clones[i]})
		if m, err := c.Get(seqs[i]); err != nil || m.Data[0] != byte(i) {
			t.Fatalf("message %d (seq %d) not durable when acknowledged: %v", i, seqs[i], err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Appends racing Close each get exactly one callback, stored or
// ErrClosed, and nothing hangs; after Close the callback runs at once.
func TestAppendAsyncRacingClose(t *testing.T) {
	t.Parallel()
	for round := range 20 {
		l, err := Open(t.TempDir(), StreamConfig{Name: "S", Durability: DurabilityNone}, Options{AppendQueue: 4})
		if err != nil {
			t.Fatal(err)
		}
		var calls, stored atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 200 {
					l.AppendAsync(Msg{Subject: "c", Data: []byte("x")}, Expect{}, func(_ PubAck, err error) {
						calls.Add(1)
						switch {
						case err == nil:
							stored.Add(1)
						case !errors.Is(err, ErrClosed):
							t.Error(err)
						}
					})
				}
			})
		}
		if round%2 == 0 {
			wg.Wait()
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if calls.Load() != 800 {
			t.Fatalf("round %d: %d callbacks for 800 appends", round, calls.Load())
		}
		if round%2 == 0 && stored.Load() != 800 {
			t.Fatalf("round %d: %d stored before Close", round, stored.Load())
		}
	}
}

func TestAppendAsyncDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under -race")
	}
	l := openLog(t, "", StreamConfig{Name: "S", Storage: StorageMemory}, Options{})
	payload := make([]byte, 128)
	acked := make(chan struct{}, 1)
	done := func(_ PubAck, err error) {
		if err != nil {
			t.Error(err)
		}
		acked <- struct{}{}
	}
	m := Msg{Subject: "alloc.subject.that.is.longer.than.thirty.two.bytes", Data: payload}
	l.AppendAsync(m, Expect{}, done) // warm up
	<-acked
	allocs := testing.AllocsPerRun(2000, func() {
		l.AppendAsync(m, Expect{}, done)
		<-acked
	})
	if allocs != 0 {
		t.Fatalf("AppendAsync allocates %v times per call", allocs)
	}
	// With preconditions that hold, as a compare-and-set does.
	allocs = testing.AllocsPerRun(2000, func() {
		last := l.State().LastSeq
		ex := Expect{LastSeq: last, HasLastSeq: true, LastSubjectSeq: last, HasLastSubjectSeq: true}
		l.AppendAsync(m, ex, done)
		<-acked
	})
	if allocs != 0 {
		t.Fatalf("AppendAsync with preconditions allocates %v times per call", allocs)
	}
	if st := l.State(); st.Msgs != 1+2*2001 { // AllocsPerRun runs each once more
		t.Fatalf("stored %d, want every append", st.Msgs)
	}
}

// A callback may delete what it just stored (interest retention with no
// consumer) through DeleteAsync, which never blocks; every delete is
// committed and reported once, also when Close comes right after.
func TestDeleteAsyncFromCallback(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys, AppendQueue: 4})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var deleted, appended atomic.Int64
	var wg sync.WaitGroup
	wg.Add(2 * n)
	for i := range n {
		l.AppendAsync(Msg{Subject: "i", Data: []byte{byte(i)}}, Expect{}, func(ack PubAck, err error) {
			defer wg.Done()
			if err != nil {
				t.Error(err)
				wg.Done()
				return
			}
			appended.Add(1)
			l.DeleteAsync(ack.Seq, func(err error) {
				defer wg.Done()
				if err != nil {
					t.Errorf("delete %d: %v", ack.Seq, err)
					return
				}
				deleted.Add(1)
			})
		})
	}
	if err := l.Close(); err != nil { // the deletes still waiting go first
		t.Fatal(err)
	}
	wg.Wait()
	if appended.Load() != n || deleted.Load() != n {
		t.Fatalf("%d appended, %d deleted of %d", appended.Load(), deleted.Load(), n)
	}
	l = openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys.CrashClone(nil)})
	if st := l.State(); st.Msgs != 0 || st.LastSeq != n {
		t.Fatalf("after the deletes: %+v", st)
	}
	errs := make(chan error, 2)
	l.DeleteAsync(1, func(err error) { errs <- err })
	if err := <-errs; !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete of a deleted seq = %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.DeleteAsync(1, func(err error) { errs <- err })
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Fatalf("delete after Close = %v", err)
	}
}
