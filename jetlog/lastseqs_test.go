package jetlog

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

// LastSeqs agrees with a brute-force model: per matching subject, its
// newest live seq at or before upTo, across segments and deletions, with
// overlapping filters counted once and the limit refused.
func TestLastSeqsMatchesBruteForce(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		l := openLog(t, t.TempDir(), StreamConfig{Name: "S", Storage: k.storage}, Options{SegmentSize: 4096})
		all := seedSpread(t, l, []string{"a.x", "a.y", "b.x", "b.y.z", "c"})
		sets := [][]string{
			nil, {""}, {"a.x"}, {"a.x", "b.x"}, {"a.*", "*.x"}, {"a.x", "a.x"}, {">"}, {"b.>", "c"}, {"zz"}, {"a..x"},
		}
		for _, filters := range sets {
			for upTo := uint64(0); upTo <= 302; upTo += 5 {
				last := map[string]uint64{}
				for seq := uint64(1); seq <= min(upTo, 300); seq++ {
					if (seq-1)%7 == 0 {
						continue
					}
					for _, f := range filters {
						if f != "" && modelMatch(f, all[seq-1]) {
							last[all[seq-1]] = seq
						}
					}
				}
				var want []uint64
				for _, seq := range last {
					want = append(want, seq)
				}
				slices.Sort(want)
				got, err := l.LastSeqs(filters, upTo, 10)
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("LastSeqs(%q, %d) = %v, %v; want %v", filters, upTo, got, err, want)
				}
				if len(want) > 1 {
					if _, err := l.LastSeqs(filters, upTo, len(want)-1); !errors.Is(err, ErrTooManySubjects) {
						t.Fatalf("LastSeqs(%q, %d) with limit %d: %v, want ErrTooManySubjects", filters, upTo, len(want)-1, err)
					}
				}
			}
		}
	})
}

// seedSpread appends 300 messages spread over subjects and deletes every
// seventh from seq 1 on; it returns each seq's subject (all[seq-1]).
func seedSpread(t *testing.T, l *Log, subjects []string) []string {
	t.Helper()
	var all []string
	for i := range 300 {
		s := subjects[(i*7+i/3)%len(subjects)]
		all = append(all, s)
		mustAppend(t, l, s, "x")
	}
	for seq := uint64(1); seq <= 300; seq += 7 {
		if err := l.Delete(seq); err != nil {
			t.Fatal(err)
		}
	}
	return all
}
