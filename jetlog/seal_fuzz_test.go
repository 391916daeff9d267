package jetlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fuzzSealer is a sealer under a fixed data key, so a sealed seed and
// the fuzzer's mutations of it open under any sealer of that key.
func fuzzSealer(t testing.TB) *sealer {
	s, err := newSealer("/d", ChaChaPoly, bytes.Repeat([]byte{9}, dataKeySize))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sealedSeed is a sealed segment of three records, with a sealed file's
// bytes after it.
func sealedSeed(t testing.TB) []byte {
	s := fuzzSealer(t)
	var seed []byte
	seed = s.appendRecord(seed, kindMsg, 1, 10, "a.b", []byte("NATS/1.0\r\n\r\n"), []byte("hello"), 0)
	seed = s.appendRecord(seed, kindMsg, 2, 11, "a.c", nil, nil, batchFlag)
	seed = s.appendRecord(seed, kindDelete, 2, 12, "", nil, appendTombstone(nil, 2, []uint64{2}), 0)
	return append(seed, s.sealFile([]byte("plain file"), "/d/stream.meta")...)
}

// FuzzSealedScan feeds arbitrary bytes to the sealed readers (the scan,
// a journal record, a sealed file, a torn tail's frames): they must
// never panic, and every entry the scan returns lies inside the data.
func FuzzSealedScan(f *testing.F) {
	seed := sealedSeed(f)
	f.Add(seed)
	f.Add(seed[:len(seed)-5])
	f.Add([]byte{})
	f.Add(make([]byte, 80))
	s := fuzzSealer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		res := scanSegment(s, "fuzz.seg", bytes.Clone(data), 0)
		for _, e := range res.entries {
			if e.off < 0 || e.off+int64(e.size) > int64(len(data)) {
				t.Fatalf("entry %+v outside %d bytes", e, len(data))
			}
		}
		if res.tornAt > int64(len(data)) {
			t.Fatalf("torn at %d beyond %d", res.tornAt, len(data))
		}
		journalRecordAt(s, nil, bytes.Clone(data), 0)
		journalFrameAt(s, data, 0)
		tornFrames(data, 0)
		_, _ = s.openFile(data, "/d/stream.meta")
	})
}

// TestSealedSeedCorpus keeps the committed seed corpus a real sealed
// segment: regenerate it with BUS_WRITE_SEAL_CORPUS=1.
func TestSealedSeedCorpus(t *testing.T) {
	name := filepath.Join("testdata", "fuzz", "FuzzSealedScan", "sealed-segment")
	body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(sealedSeed(t))) + ")\n"
	if os.Getenv("BUS_WRITE_SEAL_CORPUS") != "" {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(name)
	if err != nil || !bytes.HasPrefix(data, []byte("go test fuzz v1\n[]byte(")) {
		t.Fatalf("seed corpus %s: %v", name, err)
	}
}
