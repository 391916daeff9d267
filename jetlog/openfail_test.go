package jetlog

import (
	"errors"
	"syscall"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// A create that fails at any file-system operation (here with EMFILE,
// out of file descriptors) leaves no directory behind, which would come
// back as a ghost stream at the next start (issue 11); a retry then
// succeeds.
func TestOpenFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	count := func() int {
		fsys := vfs.NewMemFS()
		n := 0
		fsys.SetFault(func(op, name string) error { n++; return nil })
		l, err := Open("/store/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		ops := n
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		return ops
	}()
	for k := 1; k <= count; k++ {
		fsys := vfs.NewMemFS()
		if err := fsys.MkdirAll("/store", 0o755); err != nil {
			t.Fatal(err)
		}
		n := 0
		fsys.SetFault(func(op, name string) error {
			if n++; n == k {
				return syscall.EMFILE
			}
			return nil
		})
		l, err := Open("/store/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		fsys.SetFault(nil)
		if err == nil {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			continue // the failed operation was one Open may do without
		}
		if !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("op %d: Open = %v, want EMFILE", k, err)
		}
		if names, _ := fsys.ReadDir("/store"); len(names) != 0 {
			t.Fatalf("op %d: failed Open left %v in /store (%v)", k, names, err)
		}
		l = openLog(t, "/store/s", StreamConfig{Name: "S"}, Options{FS: fsys})
		if seq := mustAppend(t, l, "a", "x"); seq != 1 {
			t.Fatalf("op %d: seq %d after retry", k, seq)
		}
	}
}
