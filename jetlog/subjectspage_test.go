package jetlog

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

// pageOf is one SubjectCountsPage answer as "name=count" in byte order,
// with its total.
func pageOf(l *Log, filter string, offset, limit int) string {
	page, total := l.SubjectCountsPage(filter, offset, limit)
	var out []string
	for _, name := range slices.Sorted(maps.Keys(page)) {
		out = append(out, fmt.Sprintf("%s=%d", name, page[name]))
	}
	return fmt.Sprintf("total=%d %v", total, out)
}

func TestSubjectCountsPage(t *testing.T) {
	l := openLog(t, t.TempDir(), StreamConfig{Name: "P"}, Options{})
	for _, subj := range []string{"a.1", "a.2", "a.10", "a.2", "b", "c", "x.y.z"} {
		mustAppend(t, l, subj, "")
	}
	for _, tc := range []struct {
		filter        string
		offset, limit int
		want          string
	}{
		{">", 0, 10, "total=6 [a.1=1 a.10=1 a.2=2 b=1 c=1 x.y.z=1]"},
		{">", 0, 2, "total=6 [a.1=1 a.10=1]"},
		{">", 2, 2, "total=6 [a.2=2 b=1]"},
		{">", 4, 2, "total=6 [c=1 x.y.z=1]"},
		{">", 6, 2, "total=6 []"},
		{">", 99, 2, "total=6 []"},
		{">", -5, 3, "total=6 [a.1=1 a.10=1 a.2=2]"},
		{"a.*", 1, 1, "total=3 [a.10=1]"},
		{"a.*", 0, 3, "total=3 [a.1=1 a.10=1 a.2=2]"},
		{"a.2", 0, 1, "total=1 [a.2=2]"},
		{"a.2", 1, 1, "total=1 []"},
		{"none", 0, 1, "total=0 []"},
		{"none.*", 0, 1, "total=0 []"},
		{"bad..filter", 0, 1, "total=0 []"},
	} {
		if got := pageOf(l, tc.filter, tc.offset, tc.limit); got != tc.want {
			t.Errorf("%q offset %d limit %d: %s, want %s", tc.filter, tc.offset, tc.limit, got, tc.want)
		}
	}
}

// TestSubjectCountsPageFollowsChanges: a list kept between pages gives
// live counts, and is rebuilt when a subject comes or goes, so no page
// lists a subject that is gone or misses one that came.
func TestSubjectCountsPageFollowsChanges(t *testing.T) {
	l := openLog(t, t.TempDir(), StreamConfig{Name: "P"}, Options{})
	seqs := map[string]uint64{}
	for _, subj := range []string{"s.a", "s.b", "s.c", "s.d"} {
		seqs[subj] = mustAppend(t, l, subj, "")
	}
	steps := []struct {
		change func()
		offset int
		want   string
	}{
		{func() {}, 0, "total=4 [s.a=1 s.b=1]"},
		{func() { mustAppend(t, l, "s.c", "") }, 2, "total=4 [s.c=2 s.d=1]"},
		{func() {}, 0, "total=4 [s.a=1 s.b=1]"},
		{func() { mustAppend(t, l, "s.0", "") }, 2, "total=5 [s.b=1 s.c=2]"},
		{func() {
			if err := l.Delete(seqs["s.a"]); err != nil {
				t.Fatal(err)
			}
		}, 0, "total=4 [s.0=1 s.b=1]"},
		{func() {}, 2, "total=4 [s.c=2 s.d=1]"},
	}
	for i, step := range steps {
		step.change()
		if got := pageOf(l, "s.*", step.offset, 2); got != step.want {
			t.Errorf("step %d, offset %d: %s, want %s", i, step.offset, got, step.want)
		}
		if i == 0 && l.pages.names == nil {
			t.Error("the sorted list is not kept after the first page")
		}
	}
	if l.pages.names != nil {
		t.Error("the sorted list is still kept after its last page")
	}
}

// TestSubjectCountsPageWhileWriting pages while new subjects arrive and
// old ones go (run with -race): every page holds at most limit subjects,
// each matching the filter and with live messages, and total never falls
// below the subjects that stay.
func TestSubjectCountsPageWhileWriting(t *testing.T) {
	l := openLog(t, t.TempDir(), StreamConfig{Name: "P"}, Options{})
	const kept = 300
	for i := range kept {
		mustAppend(t, l, fmt.Sprintf("k.%d", i), "")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			seq := mustAppend(t, l, fmt.Sprintf("k.new.%d", i), "")
			if i%2 == 0 {
				if err := l.Delete(seq); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		for offset := 0; ; {
			page, total := l.SubjectCountsPage("k.>", offset, 64)
			if len(page) > 64 || total < kept {
				t.Fatalf("offset %d: %d subjects of %d", offset, len(page), total)
			}
			for name, n := range page {
				if n == 0 || len(name) < 2 || name[:2] != "k." {
					t.Fatalf("offset %d: %s=%d", offset, name, n)
				}
			}
			offset += 64
			if offset >= total {
				break
			}
		}
	}
}
