package client

import (
	"runtime"
	"testing"
)

// A payload that declares a huge array (5 bytes: array32 of 2^32-1
// elements) is refused without allocating for it. msgpack v5.4.0 and
// v5.4.1 allocated all of it (tens of GiB; vmihailenco/msgpack#401), so
// go.mod pins v5.3.6; this test keeps it so.
func TestMsgPackRefusesADeclaredHugeArray(t *testing.T) {
	for name, into := range map[string]any{"[]int64": new([]int64), "[]string": new([]string), "struct slice": new([]struct{ A, B int64 })} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := MsgPack{}.Unmarshal([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, into)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: decoded a truncated array", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
			t.Errorf("%s: %d MiB allocated for a 5-byte payload", name, got>>20)
		}
	}
}
