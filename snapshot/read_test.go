package snapshot

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sample encodes a small snapshot: three messages (one with a header,
// a gap at 2), one consumer, the end.
func sample(t testing.TB, after uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.JSON(KindHeader, Header{Version: Version, Config: json.RawMessage(`{"name":"ORDERS"}`), FirstSeq: 1, LastSeq: 4, AfterSeq: after, Time: time.Unix(1, 0).UTC()}))
	var n uint64
	for _, seq := range []uint64{1, 3, 4} {
		if seq <= after {
			continue
		}
		m := Msg{Seq: seq, Time: int64(seq), Subject: "orders.new", Data: []byte("order")}
		if seq == 3 {
			m.Header = []byte("NATS/1.0\r\nA: b\r\n\r\n")
		}
		must(w.Msg(m))
		n++
	}
	must(w.JSON(KindConsumer, Consumer{Name: "worker", Config: json.RawMessage(`{"durable_name":"worker"}`), Delivered: SeqPair{2, 3}}))
	must(w.JSON(KindEnd, End{Messages: n, Consumers: 1}))
	must(w.Close())
	return buf.Bytes()
}

func TestReadRoundTrip(t *testing.T) {
	var seqs []uint64
	var hdr []byte
	var got []Consumer
	err := Read(bytes.NewReader(sample(t, 0)), Visitor{
		Msg: func(m Msg) error {
			seqs = append(seqs, m.Seq)
			if m.Seq == 3 {
				hdr = append([]byte(nil), m.Header...)
			}
			return nil
		},
		Consumer: func(c Consumer) error { got = append(got, c); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []uint64{1, 3, 4}) || string(hdr) != "NATS/1.0\r\nA: b\r\n\r\n" || len(got) != 1 || got[0].Delivered.Stream != 3 {
		t.Fatalf("read seqs %v header %q consumers %+v", seqs, hdr, got)
	}
}

// An increment holds only messages after its AfterSeq; one below it is
// damage.
func TestReadIncrementBounds(t *testing.T) {
	if err := Read(bytes.NewReader(sample(t, 1)), Visitor{}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	_ = w.JSON(KindHeader, Header{Version: Version, FirstSeq: 1, LastSeq: 4, AfterSeq: 3})
	_ = w.Msg(Msg{Seq: 2, Subject: "a"})
	_ = w.JSON(KindEnd, End{Messages: 1})
	_ = w.Close()
	if err := Read(&buf, Visitor{}); err == nil || !strings.Contains(err.Error(), "outside 4..4") {
		t.Fatalf("a message below the increment's start: %v", err)
	}
}

func TestReadRefusesDamage(t *testing.T) {
	good := sample(t, 0)
	for name, b := range map[string][]byte{
		"truncated": good[:len(good)-6],
		"empty":     nil,
		"flipped":   func() []byte { b := bytes.Clone(good); b[len(b)/2] ^= 1; return b }(),
	} {
		if err := Read(bytes.NewReader(b), Visitor{}); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

// Any input is refused or read, never a panic, and never an allocation
// past what a record may claim (MaxRecord).
func FuzzRead(f *testing.F) {
	f.Add(sample(f, 0))
	f.Add(sample(f, 1))
	f.Add([]byte("BUSSNAP\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Read(bytes.NewReader(b), Visitor{Msg: func(m Msg) error { _ = len(m.Data); return nil }})
	})
}
