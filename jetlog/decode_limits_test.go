package jetlog

import (
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"
)

// A catalog.snap whose checksum holds but which declares a huge array (a
// bad write that was checksummed, or a crafted file) is set aside for a
// rebuild from the indexes without allocating for what it declares.
// msgpack v5.4.0 and v5.4.1 allocated it all (vmihailenco/msgpack#401),
// which FuzzCatalogSnapshot met as a worker killed for memory; go.mod
// pins v5.3.6.
func TestCatalogSnapshotDeclaringAHugeArrayIsRebuilt(t *testing.T) {
	fsys, opts, _ := catalogFixture(t)
	body := append([]byte{0x81, 0xa8}, "segments"...)
	body = append(body, 0xdd, 0xff, 0xff, 0xff, 0xff)
	clone := fsys.CrashClone(nil)
	data := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body, castagnoli))
	if err := writeFileAtomic(clone, "/s/"+catalogFile, append(data, body...)); err != nil {
		t.Fatal(err)
	}
	opts.FS = clone
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := Open("/s", StreamConfig{Name: "S"}, opts)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("%d MiB allocated opening a stream whose catalog.snap declares 2^32 segments", got>>20)
	}
	if st := l.State(); st.Msgs != 36 {
		t.Errorf("rebuilt stream holds %d messages, want 36", st.Msgs)
	}
	if p := strings.Join(l.Recovery().Problems, "; "); !strings.Contains(p, catalogFile) {
		t.Errorf("the unusable snapshot is not reported: %q", p)
	}
}
