package jetlog

import (
	"errors"
	"sync"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

func wantWrongSeq(t *testing.T, err error, subject string, last uint64) {
	t.Helper()
	var we *WrongLastSeqError
	if !errors.As(err, &we) || !errors.Is(err, ErrWrongLastSeq) || we.Subject != subject || we.Last != last {
		t.Fatalf("err = %v, want a wrong last sequence for %q with last %d", err, subject, last)
	}
}

func wantWrongID(t *testing.T, err error, last string) {
	t.Helper()
	var we *WrongLastMsgIDError
	if !errors.As(err, &we) || !errors.Is(err, ErrWrongLastMsgID) || we.Last != last {
		t.Fatalf("err = %v, want a wrong last msg id with last %q", err, last)
	}
}

func appendExpect(t *testing.T, l *Log, subject string, hdr []byte, ex Expect) (PubAck, error) {
	t.Helper()
	return l.Append(Msg{Subject: subject, Header: hdr, Data: []byte("x")}, ex)
}

func TestExpectLastSeq(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		if _, err := appendExpect(t, l, "a", nil, Expect{LastSeq: 0, HasLastSeq: true}); err != nil {
			t.Fatalf("expect 0 on an empty stream: %v", err)
		}
		_, err := appendExpect(t, l, "a", nil, Expect{LastSeq: 5, HasLastSeq: true})
		wantWrongSeq(t, err, "", 1)
		if ack, err := appendExpect(t, l, "b", nil, Expect{LastSeq: 1, HasLastSeq: true}); err != nil || ack.Seq != 2 {
			t.Fatalf("expect 1 = %+v, %v", ack, err)
		}
		if _, err := l.Purge(PurgeOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = appendExpect(t, l, "a", nil, Expect{LastSeq: 0, HasLastSeq: true})
		wantWrongSeq(t, err, "", 2) // a purge does not lower the last seq
		if st := l.State(); st.Msgs != 0 {
			t.Fatalf("refused append stored: %+v", st)
		}
	})
}

func TestExpectLastSubjectSeq(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		mustAppend(t, l, "kv.a", "1") // 1
		mustAppend(t, l, "kv.b", "1") // 2
		ex := func(seq uint64, subject string) Expect {
			return Expect{LastSubjectSeq: seq, LastSubject: subject, HasLastSubjectSeq: true}
		}
		if _, err := appendExpect(t, l, "kv.a", nil, ex(1, "")); err != nil { // 3
			t.Fatal(err)
		}
		_, err := appendExpect(t, l, "kv.a", nil, ex(1, ""))
		wantWrongSeq(t, err, "kv.a", 3)
		_, err = appendExpect(t, l, "kv.c", nil, ex(1, ""))
		wantWrongSeq(t, err, "kv.c", 0)
		if _, err := appendExpect(t, l, "kv.c", nil, ex(0, "")); err != nil { // 4: none yet
			t.Fatal(err)
		}
		if _, err := appendExpect(t, l, "kv.d", nil, ex(2, "kv.b")); err != nil { // 5: another subject
			t.Fatal(err)
		}
		_, err = appendExpect(t, l, "kv.d", nil, ex(4, "kv.*"))
		wantWrongSeq(t, err, "kv.*", 5)
		if err := l.Delete(5); err != nil {
			t.Fatal(err)
		}
		if _, err := appendExpect(t, l, "kv.e", nil, ex(4, "kv.*")); err != nil { // the newest stored
			t.Fatal(err)
		}
	})
}

func TestExpectLastMsgID(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		_, err := appendExpect(t, l, "a", nil, Expect{LastMsgID: "x"})
		wantWrongID(t, err, "")
		if _, err := appendExpect(t, l, "a", hdrWithID("m1"), Expect{}); err != nil {
			t.Fatal(err)
		}
		if _, err := appendExpect(t, l, "a", hdrWithID("m2"), Expect{LastMsgID: "m1"}); err != nil {
			t.Fatal(err)
		}
		_, err = appendExpect(t, l, "a", hdrWithID("m3"), Expect{LastMsgID: "m1"})
		wantWrongID(t, err, "m2")
		mustAppend(t, l, "a", "no id") // the newest has none now
		_, err = appendExpect(t, l, "a", nil, Expect{LastMsgID: "m2"})
		wantWrongID(t, err, "")
		if id, err := l.LastMsgID(); err != nil || id != "" {
			t.Fatalf("LastMsgID = %q, %v", id, err)
		}
	})
}

// The checks run in the reference's order: seq preconditions before the
// duplicate check, the msg id precondition after it.
func TestExpectOrderAgainstDuplicates(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "S"}, Options{})
	if _, err := appendExpect(t, l, "a", hdrWithID("d"), Expect{}); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "a", "2")
	_, err := appendExpect(t, l, "a", hdrWithID("d"), Expect{LastSeq: 9, HasLastSeq: true})
	wantWrongSeq(t, err, "", 2)
	_, err = appendExpect(t, l, "a", hdrWithID("d"), Expect{LastSubjectSeq: 9, HasLastSubjectSeq: true})
	wantWrongSeq(t, err, "a", 2)
	ack, err := appendExpect(t, l, "a", hdrWithID("d"), Expect{LastMsgID: "wrong"})
	if err != nil || !ack.Duplicate || ack.Seq != 1 {
		t.Fatalf("duplicate with a wrong last msg id = %+v, %v; want the duplicate ack", ack, err)
	}
	// A refused message records no msg id: the same id is stored later.
	_, err = appendExpect(t, l, "a", hdrWithID("e"), Expect{LastMsgID: "wrong"})
	wantWrongID(t, err, "")
	if ack, err := appendExpect(t, l, "a", hdrWithID("e"), Expect{}); err != nil || ack.Duplicate {
		t.Fatalf("after a refusal = %+v, %v", ack, err)
	}
}

// The last msg id survives a clean restart and a crash (read from the
// newest message on first need, never at Open), and follows purges.
func TestExpectLastMsgIDAcrossRestartsAndPurges(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	cfg := StreamConfig{Name: "S"}
	l := openLog(t, "/s", cfg, Options{FS: fsys})
	for _, id := range []string{"m1", "m2", "m3"} {
		if _, err := appendExpect(t, l, "a", hdrWithID(id), Expect{}); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fsys.CrashClone(nil)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*vfs.MemFS{"clean": fsys, "crash": crashed} {
		l, err := Open("/s", cfg, Options{FS: f})
		if err != nil {
			t.Fatal(err)
		}
		if rep := l.Recovery(); name == "clean" && !rep.CatalogRestored {
			t.Fatalf("%s: not a lazy open: %+v", name, rep)
		}
		if _, err := appendExpect(t, l, "a", hdrWithID("m4"), Expect{LastMsgID: "m3"}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l = openLog(t, "/s", cfg, Options{FS: fsys})
	if _, err := l.Purge(PurgeOptions{Keep: 1}); err != nil {
		t.Fatal(err)
	}
	if id, err := l.LastMsgID(); err != nil || id != "m4" {
		t.Fatalf("after purge keep 1: %q, %v", id, err)
	}
	if _, err := l.Purge(PurgeOptions{}); err != nil {
		t.Fatal(err)
	}
	if id, err := l.LastMsgID(); err != nil || id != "" {
		t.Fatalf("after purge: %q, %v", id, err)
	}
}

// Preconditions are checked where the seq is assigned: writers racing on
// one subject with compare-and-set appends never both win, and the winners
// form one chain.
func TestExpectCompareAndSetRace(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Durability: DurabilityNone}, Options{})
	var mu sync.Mutex
	wins := map[uint64]uint64{} // expected -> seq
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				last := l.LastSeqBySubject("kv.key")
				ack, err := appendExpect(t, l, "kv.key", nil, Expect{LastSubjectSeq: last, HasLastSubjectSeq: true})
				if errors.Is(err, ErrWrongLastSeq) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, ok := wins[last]; ok {
					t.Errorf("two appends won expecting %d: seqs %d and %d", last, prev, ack.Seq)
				}
				wins[last] = ack.Seq
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st := l.State()
	if uint64(len(wins)) != st.Msgs {
		t.Fatalf("%d wins, %d messages", len(wins), st.Msgs)
	}
	for seq := uint64(0); seq != st.LastSeq; {
		next, ok := wins[seq]
		if !ok {
			t.Fatalf("chain breaks after %d", seq)
		}
		seq = next
	}
}

// Within one commit each message sees the ones before it: asynchronous
// appends queued back to back, each expecting the previous one, all pass,
// and a refusal in the middle fails only its own message.
func TestExpectInsideOneCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  StreamConfig
	}{
		{"no limits", StreamConfig{Name: "S"}},
		// With a max msgs limit, each append removes the oldest message when
		// its commit is published; a subject precondition must see that.
		{"max msgs", StreamConfig{Name: "S", MaxMsgs: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := openLog(t, t.TempDir(), tc.cfg, Options{})
			mustAppend(t, l, "old", "1") // seq 1
			type result struct {
				ack PubAck
				err error
			}
			results := make([]result, 6)
			var wg sync.WaitGroup
			submit := func(i int, subject string, hdr []byte, ex Expect) {
				wg.Add(1)
				l.AppendAsync(Msg{Subject: subject, Header: hdr, Data: []byte("v")}, ex, func(ack PubAck, err error) {
					results[i] = result{ack, err}
					wg.Done()
				})
			}
			submit(0, "k", hdrWithID("a"), Expect{LastSeq: 1, HasLastSeq: true})                 // 2
			submit(1, "k", hdrWithID("b"), Expect{LastSubjectSeq: 2, HasLastSubjectSeq: true})   // 3
			submit(2, "k", nil, Expect{LastSeq: 1, HasLastSeq: true})                            // refused
			submit(3, "k", hdrWithID("c"), Expect{LastMsgID: "b", LastSeq: 3, HasLastSeq: true}) // 4
			oldLast := uint64(1)
			if tc.cfg.MaxMsgs > 0 {
				oldLast = 0 // removed by the limit when 3 was stored
			}
			submit(4, "n", nil, Expect{LastSubjectSeq: oldLast, LastSubject: "old", HasLastSubjectSeq: true}) // 5
			submit(5, "k", nil, Expect{LastMsgID: "c"})                                                       // refused: 5 had no id
			wg.Wait()
			wantSeqs := []uint64{2, 3, 0, 4, 5, 0}
			for i, r := range results {
				if wantSeqs[i] == 0 {
					if r.err == nil {
						t.Errorf("append %d stored as %d, want a refusal", i, r.ack.Seq)
					}
					continue
				}
				if r.err != nil || r.ack.Seq != wantSeqs[i] {
					t.Errorf("append %d = %+v, %v; want seq %d", i, r.ack, r.err, wantSeqs[i])
				}
			}
			wantWrongSeq(t, results[2].err, "", 3)
			wantWrongID(t, results[5].err, "")
		})
	}
}

// After one append of a group is refused, the later ones are refused too,
// also those already queued behind it; appends outside the group are not.
func TestExpectGroupStopsAtFirstRefusal(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		g := &Group{}
		errs := make(chan error, 4)
		done := func(_ PubAck, err error) { errs <- err }
		l.AppendAsync(Msg{Subject: "a", Data: []byte("1")}, Expect{Group: g}, done)
		l.AppendAsync(Msg{Subject: "a", Data: []byte("2")}, Expect{Group: g, LastSeq: 99, HasLastSeq: true}, done)
		l.AppendAsync(Msg{Subject: "a", Data: []byte("3")}, Expect{Group: g}, done)
		l.AppendAsync(Msg{Subject: "a", Data: []byte("4")}, Expect{}, done)
		var got []error
		for range 4 {
			got = append(got, <-errs)
		}
		if got[0] != nil || !errors.Is(got[1], ErrWrongLastSeq) || !errors.Is(got[2], ErrGroupFailed) || got[3] != nil {
			t.Fatalf("outcomes %v", got)
		}
		if !g.Failed() || l.State().Msgs != 2 {
			t.Fatalf("failed %v, %d stored; want true, 2", g.Failed(), l.State().Msgs)
		}
	})
}
