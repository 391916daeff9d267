package jetlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLimitsDiscardOld(t *testing.T) {
	cases := []struct {
		name      string
		cfg       StreamConfig
		msgs      int
		wantFirst uint64
		wantMsgs  uint64
	}{
		{"max_msgs", StreamConfig{MaxMsgs: 5}, 12, 8, 5},
		{"max_bytes", StreamConfig{MaxBytes: 3}, 10, 8, 3}, // 3 messages' worth, set below
		{"max_msgs_per_subject", StreamConfig{MaxMsgsPerSubject: 1}, 10, 9, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, k storeKind) {
				dir := t.TempDir()
				cfg := tc.cfg
				cfg.Name, cfg.Storage = "S", k.storage
				cfg.MaxBytes *= int64(accountedSize(k.storage, "s.x", nil, []byte("payload")))
				l := openLog(t, dir, cfg, Options{SegmentSize: 256})
				for i := range tc.msgs {
					mustAppend(t, l, fmt.Sprintf("s.%c", 'a'+i%2), "payload")
				}
				st := l.State()
				if st.FirstSeq != tc.wantFirst || st.Msgs != tc.wantMsgs || st.LastSeq != uint64(tc.msgs) {
					t.Fatalf("state = %+v", st)
				}
				if k.storage == StorageMemory {
					return
				}
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				l2 := openLog(t, dir, cfg, Options{SegmentSize: 256})
				if got := l2.State(); got != st {
					t.Fatalf("reopened state = %+v, want %+v", got, st)
				}
			})
		})
	}
}

func TestLimitsDiscardNew(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		size := int64(accountedSize(k.storage, "s", nil, []byte("x")))
		cases := []struct {
			cfg  StreamConfig
			want error
		}{
			{StreamConfig{MaxMsgs: 2}, ErrMaxMsgs},
			{StreamConfig{MaxBytes: 2 * size}, ErrMaxBytes},
			{StreamConfig{MaxMsgsPerSubject: 2, DiscardNewPerSubject: true}, ErrMaxMsgsPerSubject},
		}
		for _, tc := range cases {
			cfg := tc.cfg
			cfg.Name, cfg.Storage, cfg.Discard = "S", k.storage, DiscardNew
			l := openLog(t, t.TempDir(), cfg, Options{})
			mustAppend(t, l, "s", "x")
			mustAppend(t, l, "s", "x")
			if _, err := l.Append(Msg{Subject: "s", Data: []byte("x")}, Expect{}); !errors.Is(err, tc.want) {
				t.Errorf("%+v: third append err = %v, want %v", tc.cfg, err, tc.want)
			}
			// A batch is refused at the same point.
			if err := l.Delete(1); err != nil {
				t.Fatal(err)
			}
			acks, err := l.AppendBatch([]Msg{{Subject: "s", Data: []byte("x")}, {Subject: "s", Data: []byte("x")}}, Expect{})
			if !errors.Is(err, tc.want) || len(acks) != 1 || acks[0].Seq != 3 {
				t.Errorf("%+v: batch = %+v, %v", tc.cfg, acks, err)
			}
		}
	})
}

func TestLimitsMaxAgeExpires(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		clock := newFakeClock()
		dir := t.TempDir()
		cfg := StreamConfig{Name: "S", Storage: k.storage, MaxAge: time.Minute}
		opts := Options{Now: clock.Now, ExpireEvery: -1, SegmentSize: 128}
		l := openLog(t, dir, cfg, opts)
		for i := range 10 {
			mustAppend(t, l, "s", fmt.Sprint(i))
			clock.Advance(10 * time.Second)
		}
		// Now = t0+100s; messages stored at t0+0..90s; cut = t0+40s.
		n, err := l.Expire()
		if err != nil || n != 4 {
			t.Fatalf("Expire = %d, %v", n, err)
		}
		if st := l.State(); st.FirstSeq != 5 || st.Msgs != 6 {
			t.Fatalf("state = %+v", st)
		}
		if k.storage == StorageMemory {
			return
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		clock.Advance(30 * time.Second) // cut = t0+70s
		l2 := openLog(t, dir, cfg, opts)
		if st := l2.State(); st.FirstSeq != 8 || st.Msgs != 3 {
			t.Fatalf("reopened state = %+v", st)
		}
	})
}

func TestLimitsBackgroundExpiry(t *testing.T) {
	l := openLog(t, "", StreamConfig{Name: "S", Storage: StorageMemory, MaxAge: 100 * time.Millisecond}, Options{ExpireEvery: 5 * time.Millisecond})
	mustAppend(t, l, "s", "x")
	eventually(t, 5*time.Second, func() bool { return l.State().Msgs == 0 })
}

func TestLimitsUpdateConfigApplies(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{})
		for range 10 {
			mustAppend(t, l, "s", "x")
		}
		if err := l.UpdateConfig(StreamConfig{Name: "S", Storage: k.storage, MaxMsgs: 3}); err != nil {
			t.Fatal(err)
		}
		if st := l.State(); st.Msgs != 3 || st.FirstSeq != 8 {
			t.Fatalf("state = %+v", st)
		}
		if got := l.Config().MaxMsgs; got != 3 {
			t.Fatalf("config max msgs = %d", got)
		}
	})
}

func TestDedup(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		clock := newFakeClock()
		dir := t.TempDir()
		cfg := StreamConfig{Name: "S", Storage: k.storage, DuplicateWindow: time.Minute}
		l := openLog(t, dir, cfg, Options{Now: clock.Now})
		a1, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one"), Data: []byte("1")}, Expect{})
		if err != nil || a1.Duplicate {
			t.Fatal(a1, err)
		}
		mustAppend(t, l, "s", "other")
		a2, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one"), Data: []byte("again")}, Expect{})
		if err != nil || !a2.Duplicate || a2.Seq != a1.Seq {
			t.Fatalf("duplicate ack = %+v, %v", a2, err)
		}
		// In one batch too.
		acks, err := l.AppendBatch([]Msg{{Subject: "s", Header: hdrWithID("two")}, {Subject: "s", Header: hdrWithID("two")}}, Expect{})
		if err != nil || acks[0].Duplicate || !acks[1].Duplicate || acks[1].Seq != acks[0].Seq {
			t.Fatalf("batch acks = %+v, %v", acks, err)
		}
		if st := l.State(); st.Msgs != 3 {
			t.Fatalf("msgs = %d", st.Msgs)
		}
		if k.storage == StorageFile {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, cfg, Options{Now: clock.Now})
			a3, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one")}, Expect{})
			if err != nil || !a3.Duplicate || a3.Seq != 1 {
				t.Fatalf("after reopen = %+v, %v", a3, err)
			}
		}
		clock.Advance(2 * time.Minute)
		a4, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one")}, Expect{})
		if err != nil || a4.Duplicate {
			t.Fatalf("after window = %+v, %v", a4, err)
		}
	})
}

func TestMsgID(t *testing.T) {
	cases := []struct{ hdr, want string }{
		{"NATS/1.0\r\nNats-Msg-Id: abc\r\n\r\n", "abc"},
		{"NATS/1.0\r\nA: 1\r\nnats-msg-id:  x y \r\n\r\n", "x y"},
		{"NATS/1.0\r\nA: 1\r\n\r\n", ""},
		{"NATS/1.0", ""},
		{"garbage\r\nNats-Msg-Id", ""},
		{"", ""},
	}
	for _, tc := range cases {
		if got := string(msgID([]byte(tc.hdr))); got != tc.want {
			t.Errorf("msgID(%q) = %q, want %q", tc.hdr, got, tc.want)
		}
	}
}

// A clean restart takes the dedup window from the snapshot Close wrote
// instead of reading the messages; a damaged snapshot is rebuilt from the
// log and reported; after a crash the log is the only source.
func TestDedupSnapshotOnCleanRestart(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	dir := t.TempDir()
	cfg := StreamConfig{Name: "S", DuplicateWindow: time.Minute}
	l := openLog(t, dir, cfg, Options{Now: clock.Now})
	a1, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one"), Data: []byte("1")}, Expect{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "s", "plain")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	check := func(l *Log, wantRestored bool) {
		t.Helper()
		if got := l.Recovery().DedupRestored; got != wantRestored {
			t.Fatalf("dedup restored from snapshot = %v, want %v (%+v)", got, wantRestored, l.Recovery())
		}
		a, err := l.Append(Msg{Subject: "s", Header: hdrWithID("one"), Data: []byte("again")}, Expect{})
		if err != nil || !a.Duplicate || a.Seq != a1.Seq {
			t.Fatalf("duplicate after reopen = %+v, %v", a, err)
		}
	}
	l2 := openLog(t, dir, cfg, Options{Now: clock.Now})
	check(l2, true)
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage the snapshot: it must not be trusted.
	if err := os.WriteFile(filepath.Join(dir, dedupFile), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	l3 := openLog(t, dir, cfg, Options{Now: clock.Now})
	check(l3, false)
	if len(l3.Recovery().Problems) == 0 {
		t.Fatal("a damaged dedup snapshot was not reported")
	}
}
