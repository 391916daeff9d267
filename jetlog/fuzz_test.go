package jetlog

import (
	"testing"
)

// FuzzScanSegment feeds arbitrary bytes to the segment scanner: it must
// never panic, and every entry it returns must lie inside the data and
// decode again.
func FuzzScanSegment(f *testing.F) {
	var seed []byte
	seed = appendRecord(seed, kindMsg, 1, 10, "a.b", []byte("NATS/1.0\r\n\r\n"), []byte("hello"))
	seed = appendRecord(seed, kindMsg, 2, 11, "a.c", nil, nil)
	seed = appendRecord(seed, kindDelete, 2, 12, "", nil, appendTombstone(nil, 2, []uint64{2}))
	f.Add(seed)
	f.Add(seed[:len(seed)-3])
	f.Add([]byte{})
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		res := scanSegment("fuzz.seg", data, 0)
		for _, e := range res.entries {
			if e.off < 0 || e.off+int64(e.size) > int64(len(data)) {
				t.Fatalf("entry %+v outside %d bytes", e, len(data))
			}
			if _, reason := decodeRecord(data[e.off : e.off+int64(e.size)]); reason != "" {
				t.Fatalf("entry %+v does not decode: %s", e, reason)
			}
		}
		if res.tornAt > int64(len(data)) {
			t.Fatalf("torn at %d beyond %d", res.tornAt, len(data))
		}
		// Index and header parsers share the no-panic rule.
		decodeIndex(data)
		msgID(data)
		decodeTombstone(data, func(uint64) {})
	})
}
