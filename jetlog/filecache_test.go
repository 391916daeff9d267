package jetlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// openFDs counts the process's open file descriptors, or -1 where
// /proc/self/fd is not there.
func openFDs() int {
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(names)
}

// File descriptors follow the working set, not the number of streams:
// with a FileCache of 8, 32 open streams of three segments each (96
// segment files) hold at most 8 descriptors between them; without one
// each holds its segments and its LOCK, 128 here (issue 11).
func TestFileCacheBoundsOpenFiles(t *testing.T) {
	// Not parallel: it counts the process's descriptors.
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	const streams, maxOpen = 32, 8
	run := func(t *testing.T, cache *FileCache) int {
		dir := t.TempDir()
		base := openFDs()
		var logs []*Log
		for i := range streams {
			l, err := Open(filepath.Join(dir, fmt.Sprint(i)), StreamConfig{Name: fmt.Sprint(i)}, Options{SegmentSize: 200, FileCache: cache, ExpireEvery: -1})
			if err != nil {
				t.Fatal(err)
			}
			logs = append(logs, l)
			for j := range 3 { // a segment each
				msg := Msg{Subject: "s", Data: fmt.Appendf(nil, "payload-%d-%d-%0100d", i, j, 0)}
				if _, err := l.AppendBatch([]Msg{msg, msg}, Expect{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, l := range logs { // read the oldest of each again
			if m := mustGet(t, l, 1); m.Subject != "s" {
				t.Fatalf("Get(1) = %+v", m)
			}
		}
		n := openFDs() - base
		for _, l := range logs {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: maxOpen})
	if err != nil {
		t.Fatal(err)
	}
	if n := run(t, cache); n > maxOpen+4 {
		t.Errorf("%d streams hold %d descriptors with a cache of %d", streams, n, maxOpen)
	}
	if st := cache.Stats(); st.Open != 0 || st.Evicted == 0 {
		t.Errorf("cache stats after every Close: %+v", st)
	}
}

// Streams sharing a cache of one file keep working: appends, reads racing
// them, rolls, Close and reopen, on files the cache closes all the time.
func TestFileCacheEvictsUnderLoad(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{FS: fsys, SegmentSize: 300, FileCache: cache}
	const streams, n = 3, 40
	var wg sync.WaitGroup
	for s := range streams {
		wg.Go(func() {
			dir := fmt.Sprintf("/s%d", s)
			l, err := Open(dir, StreamConfig{Name: dir[1:]}, opts)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range n {
				ack, err := l.Append(Msg{Subject: "x", Data: fmt.Appendf(nil, "%d-%d", s, i)}, Expect{})
				if err != nil {
					t.Error(err)
					return
				}
				if m, err := l.Get(1 + ack.Seq/2); err != nil || string(m.Data) != fmt.Sprintf("%d-%d", s, ack.Seq/2) {
					t.Errorf("Get(%d) = %q, %v", 1+ack.Seq/2, m.Data, err)
				}
			}
			if err := l.Close(); err != nil {
				t.Error(err)
			}
			l, err = Open(dir, StreamConfig{Name: dir[1:]}, opts)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for i := range n {
				if m, err := l.Get(uint64(i + 1)); err != nil || string(m.Data) != fmt.Sprintf("%d-%d", s, i) {
					t.Errorf("after reopen Get(%d) = %q, %v", i+1, m.Data, err)
				}
			}
		})
	}
	wg.Wait()
	if st := cache.Stats(); st.Evicted == 0 {
		t.Fatalf("nothing evicted: %+v", st)
	}
}

// The cache stands in for the per-stream LOCK: a second Open of the same
// directory in this process is refused until the first is closed, and
// the cache's own LockFile keeps another holder out.
func TestFileCacheLocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cache, err := NewFileCache(FileCacheOptions{LockFile: filepath.Join(dir, "LOCK")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewFileCache(FileCacheOptions{LockFile: filepath.Join(dir, "LOCK")}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second cache on the same lock file: %v", err)
	}
	s := filepath.Join(dir, "s")
	l, err := Open(s, StreamConfig{Name: "S"}, Options{FileCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(s, StreamConfig{Name: "S"}, Options{FileCache: cache}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, s, StreamConfig{Name: "S"}, Options{FileCache: cache})
	if _, err := os.Stat(filepath.Join(s, lockFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stream opened through the cache has its own LOCK: %v", err)
	}
	mustAppend(t, l, "a", "b")
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}
}

// Streams that never sync (DurabilityNone) do not pin their active
// segment open: there is no fsync a write-back error could be missed by.
func TestFileCacheEvictsUnsyncedStreams(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		l := openLog(t, fmt.Sprintf("/n%d", i), StreamConfig{Name: "N", Durability: DurabilityNone}, Options{FS: fsys, FileCache: cache})
		mustAppend(t, l, "a", "b")
	}
	if st := cache.Stats(); st.Open > 1 {
		t.Fatalf("%d files open with a cache of 1: %+v", st.Open, st)
	}
}

// A reader that found a segment reads it even if the segment is removed
// and the cache is full before the read: the file stays open for it, as
// without a cache.
func TestFileCacheReaderOutlivesRemovedSegment(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{FS: fsys, SegmentSize: 200, FileCache: cache}
	l := openLog(t, "/a", StreamConfig{Name: "A"}, opts)
	other := openLog(t, "/b", StreamConfig{Name: "B"}, opts)
	const n = 10
	for i := range n {
		mustAppend(t, l, "x", fmt.Sprintf("payload-%d-%040d", i, 0))
	}
	read := 0
	for m, err := range l.Messages(1) {
		if err != nil {
			t.Fatalf("read %d after the purge: %v", read+1, err)
		}
		if want := fmt.Sprintf("payload-%d-%040d", read, 0); string(m.Data) != want {
			t.Fatalf("seq %d = %q", m.Seq, m.Data)
		}
		if read == 0 { // every segment goes; another stream takes the cache
			if _, err := l.Purge(PurgeOptions{}); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, other, "y", "z")
		}
		read++
	}
	if read != n {
		t.Fatalf("read %d messages, want the %d found before the purge", read, n)
	}
}

// Consumer journals go through the log's cache too: idle consumers hold
// no descriptor, and their state survives the cache closing their files.
func TestFileCacheConsumerJournals(t *testing.T) {
	// Not parallel: it counts the process's descriptors.
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{FileCache: cache, CompactBytes: 100, ExpireEvery: -1}
	l := openLog(t, filepath.Join(t.TempDir(), "s"), StreamConfig{Name: "S"}, opts)
	msgs := make([]Msg, 8)
	for i := range msgs {
		msgs[i] = Msg{Subject: "x", Data: []byte("y")}
	}
	if _, err := l.AppendBatch(msgs, Expect{}); err != nil {
		t.Fatal(err)
	}
	const consumers = 8
	for round := range 2 {
		base := openFDs()
		var cs []*Consumer
		for i := range consumers {
			c, err := l.OpenConsumer(fmt.Sprintf("c%d", i), ConsumerConfig{})
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, c)
		}
		for _, c := range cs {
			for k := range uint64(4) {
				seq := 1 + k + uint64(round)*4
				if _, err := c.Deliver(seq); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Ack(seq); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := openFDs() - base; n > 2+2 {
			t.Errorf("round %d: %d open consumers hold %d descriptors with a cache of 2", round, consumers, n)
		}
		for i, c := range cs {
			if got := c.Info().AckFloor.Stream; got != uint64(4*(round+1)) {
				t.Errorf("round %d: consumer %d ack floor %d", round, i, got)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
