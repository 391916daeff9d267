package jetlog

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Recovery states the sequences it lost, not just the bytes, and whether
// they had been acknowledged (issue 11).

// buildCleanLog appends n messages like buildMemLog in the given mode and
// closes the log cleanly; it returns each record's offset and the end.
func buildCleanLog(t *testing.T, n int, d Durability) (*vfs.MemFS, []int64, int64) {
	t.Helper()
	fsys := vfs.NewMemFS()
	l, err := Open("/s", StreamConfig{Name: "S", Durability: d}, Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	var end int64
	for i := range n {
		offs = append(offs, end)
		subj, data := fmt.Sprintf("rec.%d", i), []byte(fmt.Sprintf("payload-%d", i))
		if _, err := l.Append(Msg{Subject: subj, Data: data}, Expect{}); err != nil {
			t.Fatal(err)
		}
		end += int64(recordSize(subj, nil, data))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fsys, offs, end
}

func TestRecoveryReportsLostSeqs(t *testing.T) {
	t.Parallel()
	const n = 12
	type want struct {
		losses []Loss
		next   uint64 // seq of the next append
	}
	loss := func(first, last uint64, reason string, acked AckStatus) Loss {
		return Loss{Stream: "S", SeqRange: SeqRange{first, last}, Segment: segName(1), Reason: reason, Acked: acked}
	}
	cases := []struct {
		name   string
		build  func(t *testing.T) (*vfs.MemFS, []int64, int64)
		damage func(t *testing.T, fsys *vfs.MemFS, offs []int64, end int64)
		cfg    StreamConfig
		want   want
	}{{
		// The last commit never finished its fsync: its publisher got no ack.
		name:  "torn_tail_of_an_unfinished_commit",
		build: func(t *testing.T) (*vfs.MemFS, []int64, int64) { return buildMemLog(t, n) },
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, _ int64) {
			truncateFile(t, fsys, firstSeg, offs[n-1]+30)
		},
		want: want{[]Loss{loss(n, n, "torn tail", LossNotAcked)}, n},
	}, {
		// Two records whose headers are both there, both cut.
		name:  "torn_tail_of_two_records",
		build: func(t *testing.T) (*vfs.MemFS, []int64, int64) { return buildMemLog(t, n) },
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, end int64) {
			flipBit(t, fsys, firstSeg, offs[n-2]+30, 1)
			truncateFile(t, fsys, firstSeg, end-1)
		},
		want: want{[]Loss{loss(n-1, n, "torn tail", LossNotAcked)}, n - 1},
	}, {
		// After a clean Close every seq is below the durable mark: a
		// damaged tail is the loss of acknowledged messages, and their
		// seqs are not used again.
		name:  "damaged_tail_after_a_clean_close",
		build: func(t *testing.T) (*vfs.MemFS, []int64, int64) { return buildCleanLog(t, n, DurabilityAlways) },
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, _ int64) {
			flipBit(t, fsys, firstSeg, offs[n-1]+30, 2)
		},
		want: want{[]Loss{loss(n, n, "torn tail", LossAcked)}, n + 1},
	}, {
		name:   "corrupt_record_after_a_clean_close",
		build:  func(t *testing.T) (*vfs.MemFS, []int64, int64) { return buildCleanLog(t, n, DurabilityAlways) },
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, _ int64) { flipBit(t, fsys, firstSeg, offs[4]+30, 2) },
		want:   want{[]Loss{loss(5, 5, "corrupt record", LossAcked)}, n + 1},
	}, {
		// After a crash the durable mark is the one written at Open: a
		// damaged record above it may have been acknowledged.
		name:   "corrupt_record_after_a_crash",
		build:  func(t *testing.T) (*vfs.MemFS, []int64, int64) { return buildMemLog(t, n) },
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, _ int64) { flipBit(t, fsys, firstSeg, offs[4]+30, 2) },
		want:   want{[]Loss{loss(5, 5, "corrupt record", LossMaybeAcked)}, n + 1},
	}, {
		// In interval mode a torn record may have been acknowledged before
		// its sync: its seq is not used again.
		name: "torn_tail_in_interval_mode",
		build: func(t *testing.T) (*vfs.MemFS, []int64, int64) {
			fsys, offs, end := buildCleanLog(t, n, DurabilityInterval)
			removeFiles(t, fsys, cleanFile, markFile) // as after a crash, and an old store
			return fsys, offs, end
		},
		damage: func(t *testing.T, fsys *vfs.MemFS, offs []int64, _ int64) {
			truncateFile(t, fsys, firstSeg, offs[n-1]+30)
		},
		cfg:  StreamConfig{Name: "S", Durability: DurabilityInterval},
		want: want{[]Loss{loss(n, n, "torn tail", LossMaybeAcked)}, n + 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys, offs, end := tc.build(t)
			tc.damage(t, fsys, offs, end)
			cfg := tc.cfg
			if cfg.Name == "" {
				cfg = StreamConfig{Name: "S"}
			}
			l := openLog(t, "/s", cfg, Options{FS: fsys})
			if got := l.Recovery().Losses; !slices.Equal(got, tc.want.losses) {
				t.Errorf("Losses = %+v, want %+v (report %+v)", got, tc.want.losses, l.Recovery())
			}
			if seq := mustAppend(t, l, "after", "x"); seq != tc.want.next {
				t.Errorf("next seq %d, want %d", seq, tc.want.next)
			}
		})
	}
}
