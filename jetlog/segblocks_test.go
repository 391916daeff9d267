package jetlog

import (
	"fmt"
	"math/rand/v2"
	"path"
	"testing"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// blocksLog fills a log on fsys at /s with n messages on distinct
// subjects b.<i>, in segments of several index blocks each, and closes it.
func blocksLog(t *testing.T, fsys FS, n int) Options {
	t.Helper()
	opts := Options{FS: fsys, SegmentSize: 256 << 10} // about 5,000 messages, 5 blocks, a segment
	l := openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	batch := make([]Msg, 0, 500)
	for i := range n {
		batch = append(batch, Msg{Subject: fmt.Sprintf("b.%d", i), Data: []byte("x")})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := l.AppendBatch(batch, Expect{}); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// checkBlockReads reopens the log and reads the messages of some subjects
// with one filter and with several, checking each against its seq
// (message i is seq i+1), and returns how many reads used the blocks.
func checkBlockReads(t *testing.T, opts Options, n int) uint64 {
	t.Helper()
	l := openLog(t, "/s", StreamConfig{Name: "S"}, opts)
	defer l.Close() //nolint:errcheck // read-only
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for range 20 {
		i := rng.IntN(n)
		m, err := l.Next(1, fmt.Sprintf("b.%d", i))
		if err != nil || m.Seq != uint64(i+1) || m.Subject != fmt.Sprintf("b.%d", i) {
			t.Fatalf("Next b.%d = %d %q, %v; want seq %d", i, m.Seq, m.Subject, err, i+1)
		}
	}
	filters := make([]string, 50)
	for k := range filters {
		filters[k] = fmt.Sprintf("b.%d", k*(n/len(filters))+rng.IntN(n/len(filters)))
	}
	got := 0
	for from := uint64(1); ; {
		msgs, err := l.NextBatch(from, filters, 64)
		if err != nil {
			break
		}
		for _, m := range msgs {
			if m.Subject != filters[got] || m.Subject != fmt.Sprintf("b.%d", m.Seq-1) {
				t.Fatalf("NextBatch message %d: seq %d %q; want %q", got, m.Seq, m.Subject, filters[got])
			}
			got++
		}
		from = msgs[len(msgs)-1].Seq + 1
	}
	if got != len(filters) {
		t.Fatalf("NextBatch read %d messages of %d filters", got, len(filters))
	}
	if st := l.index.Stats(); st.Loads != 0 {
		t.Fatalf("%d sections loaded; the reads should need none", st.Loads)
	}
	return l.Stats().BlockReads
}

// A sealed segment's block directory leads a lookup to the one index
// block holding its message; a directory that is missing, damaged, stale
// or cut short by a crash is never trusted: the whole index is read
// instead, with the same answers (issue #30).
func TestBlockDirectory(t *testing.T) {
	t.Parallel()
	const n = 20_000 // three or four segments
	fsys := vfs.NewMemFS()
	opts := blocksLog(t, fsys, n)
	blks := 0
	names, err := fsys.ReadDir("/s")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if path.Ext(name) == blkSuffix {
			blks++
		}
	}
	if blks < 3 {
		t.Fatalf("%d block directories in %q; want one a segment", blks, names)
	}
	if got := checkBlockReads(t, opts, n); got == 0 {
		t.Fatal("no read used the block directory")
	}

	originals := map[string][]byte{}
	for _, name := range names {
		if path.Ext(name) == blkSuffix {
			originals[path.Join("/s", name)] = readFile(t, fsys, path.Join("/s", name))
		}
	}
	damage := map[string]func(t *testing.T, name string){
		"missing": func(t *testing.T, name string) {
			if err := fsys.Remove(name); err != nil {
				t.Fatal(err)
			}
		},
		"flipped byte": func(t *testing.T, name string) {
			data := readFile(t, fsys, name)
			data[len(data)/2] ^= 0x40
			writeFile(t, fsys, name, data)
		},
		"another segment's": func(t *testing.T, name string) {
			for other, data := range originals {
				if other != name {
					writeFile(t, fsys, name, data)
					return
				}
			}
		},
		"cut short": func(t *testing.T, name string) {
			data := readFile(t, fsys, name)
			writeFile(t, fsys, name, data[:len(data)-7])
		},
	}
	for what, spoil := range damage {
		t.Run(what, func(t *testing.T) {
			for name, data := range originals {
				writeFile(t, fsys, name, data)
			}
			for name := range originals {
				spoil(t, name)
			}
			if got := checkBlockReads(t, opts, n); got != 0 {
				t.Fatalf("%d reads trusted a %s block directory", got, what)
			}
		})
	}
}

// After a power cut the block directories that survive agree with their
// indexes or are not used: every read answers as the log says, on the
// strict-POSIX fake.
func TestBlockDirectoryAfterCrash(t *testing.T) {
	t.Parallel()
	const n = 20_000
	fsys := vfs.NewMemFS()
	blocksLog(t, fsys, n)
	for seed := range uint64(4) {
		crashed := fsys.CrashClone(rand.New(rand.NewPCG(seed, 1)))
		checkBlockReads(t, Options{FS: crashed, SegmentSize: 256 << 10}, n)
	}
}
