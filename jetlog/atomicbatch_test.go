package jetlog

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

func batchMsgs(prefix string, n int) []Msg {
	msgs := make([]Msg, n)
	for i := range msgs {
		msgs[i] = Msg{Subject: fmt.Sprintf("%s.%d", prefix, i), Data: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	return msgs
}

func TestAppendAtomicAllOrNothing(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "A", Storage: k.storage}, Options{})
		mustAppend(t, l, "pre", "x")

		// A failed precondition on the third message stores none.
		msgs := batchMsgs("b", 3)
		ex := make([]Expect, 3)
		ex[0] = Expect{LastSeq: 1, HasLastSeq: true}
		ex[2] = Expect{LastSubjectSeq: 7, HasLastSubjectSeq: true}
		if _, err := l.AppendAtomic(msgs, ex); !errors.Is(err, ErrWrongLastSeq) {
			t.Fatalf("bad expect: %v", err)
		}
		// A msg id seen before refuses the batch too.
		msgs[1].Header = hdrWithID("id-1")
		if _, err := l.Append(Msg{Subject: "plain", Header: hdrWithID("id-1")}, Expect{}); err != nil {
			t.Fatal(err)
		}
		var dup *BatchDuplicateError
		if _, err := l.AppendAtomic(msgs, nil); !errors.As(err, &dup) || dup.Index != 1 || dup.Seq != 2 {
			t.Fatalf("duplicate: %v", err)
		}
		// As does an id twice within the batch.
		msgs[1].Header, msgs[2].Header = hdrWithID("id-2"), hdrWithID("id-2")
		if _, err := l.AppendAtomic(msgs, nil); !errors.As(err, &dup) || dup.Index != 2 {
			t.Fatalf("duplicate within: %v", err)
		}
		if st := l.State(); st.Msgs != 2 || st.LastSeq != 2 {
			t.Fatalf("after refusals: %+v", st)
		}
		// The refused ids were not recorded: the batch goes in whole now.
		msgs[2].Header = hdrWithID("id-3")
		ex[0].LastSeq, ex[2] = 2, Expect{}
		acks, err := l.AppendAtomic(msgs, ex)
		if err != nil || len(acks) != 3 || acks[0].Seq != 3 || acks[2].Seq != 5 {
			t.Fatalf("batch: %+v %v", acks, err)
		}
		for i, m := range msgs {
			if got := mustGet(t, l, uint64(3+i)); string(got.Data) != string(m.Data) {
				t.Fatalf("seq %d = %q", 3+i, got.Data)
			}
		}
	})
}

// TestAppendAtomicRefusalLeavesOthers: a refused batch committed with
// plain appends takes out only its own messages.
func TestAppendAtomicRefusalLeavesOthers(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "A"}, Options{})
	done := make(chan error, 2)
	cb := func(_ PubAck, err error) { done <- err }
	l.AppendAsync(Msg{Subject: "before"}, Expect{}, cb)
	ex := []Expect{{}, {LastSeq: 99, HasLastSeq: true}}
	if _, err := l.AppendAtomic(batchMsgs("b", 2), ex); !errors.Is(err, ErrWrongLastSeq) {
		t.Fatalf("batch: %v", err)
	}
	l.AppendAsync(Msg{Subject: "after"}, Expect{}, cb)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if st := l.State(); st.Msgs != 2 || st.LastSeq != 2 {
		t.Fatalf("state %+v", st)
	}
	if m := mustGet(t, l, 2); m.Subject != "after" {
		t.Fatalf("seq 2 = %q", m.Subject)
	}
}

// TestAppendAtomicTornEveryOffset cuts the segment at every byte of an
// atomic batch's write, as a crash in the middle of it would: recovery
// keeps all of the batch or none of it, never a prefix.
func TestAppendAtomicTornEveryOffset(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "pre", "x")
	start := int64(recordSize("pre", nil, []byte("x")))
	msgs := batchMsgs("b", 4)
	if _, err := l.AppendAtomic(msgs, nil); err != nil {
		t.Fatal(err)
	}
	end := start
	for _, m := range msgs {
		end += int64(recordSize(m.Subject, nil, m.Data))
	}
	base := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for cut := start; cut <= end; cut++ {
		fs := base.CrashClone(nil)
		truncateFile(t, fs, firstSeg, cut)
		l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fs})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		want := uint64(1)
		if cut == end {
			want = 5
		}
		if st := l.State(); st.Msgs != want || st.LastSeq != want {
			t.Fatalf("cut %d: state %+v, want %d msgs", cut, st, want)
		}
		if rep := l.Recovery(); len(rep.Corrupt) != 0 || rep.TruncatedBytes != cut-start && cut != end {
			t.Fatalf("cut %d: report %+v", cut, rep)
		}
		if ack, err := l.Append(Msg{Subject: "after"}, Expect{}); err != nil || ack.Seq < want+1 {
			t.Fatalf("cut %d: append after = %+v %v", cut, ack, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
