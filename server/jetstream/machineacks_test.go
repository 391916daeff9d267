package jetstream

import (
	"strconv"
	"strings"
	"testing"
)

// splitAckSeq is the model parseAckSubject must agree with: split on
// dots; the v1 form has nine tokens, the stream seq the sixth; the v2
// form ($JS.ACK.<domain>.<account hash>.…) eleven or more, the stream
// seq the eighth; the seq a decimal uint64.
func splitAckSeq(subject string) (uint64, bool) {
	t := strings.Split(subject, ".")
	var tok string
	switch {
	case len(t) == 9:
		tok = t[5]
	case len(t) >= 11:
		tok = t[7]
	default:
		return 0, false
	}
	seq, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return 0, false
	}
	return seq, true
}

func TestParseAckSubject(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"$JS.ACK.S.C.1.42.7.1767225600000000000.0",
		"$JS.ACK.S.C.1.18446744073709551615.7.1.0",
		"$JS.ACK.S.C.1.18446744073709551616.7.1.0", // overflows
		"$JS.ACK.S.C.1.99999999999999999999.7.1.0",
		"$JS.ACK.S.C.1..7.1.0",
		"$JS.ACK.S.C.1.+4.7.1.0",
		"$JS.ACK.S.C.1.4x.7.1.0",
		"$JS.ACK.S.C.1.4.7.1",
		"$JS.ACK.S.C.1.4.7.1.0.extra",
		"$JS.ACK.S.C.1.0.7.1.0",
		"$JS.ACK._.HASH.S.C.1.42.7.1767225600000000000.0",
		"$JS.ACK.hub.HASH.S.C.1.42.7.1.0.token",
		"$JS.ACK._.HASH.S.C.1.x.7.1.0",
		"$JS.ACK._.HASH.S.C.1.42.7.1",
		"", ".", "........", ".........", "..........",
	} {
		wantSeq, wantOK := splitAckSeq(s)
		for name, got := range map[string]func() (uint64, bool){
			"string": func() (uint64, bool) { return parseAckSubject(s) },
			"bytes":  func() (uint64, bool) { return parseAckSubject([]byte(s)) },
		} {
			seq, ok := got()
			if seq != wantSeq || ok != wantOK {
				t.Errorf("%s %q: got %d %v, want %d %v", name, s, seq, ok, wantSeq, wantOK)
			}
		}
	}
}

func FuzzParseAckSubject(f *testing.F) {
	f.Add("$JS.ACK.S.C.1.42.7.1767225600000000000.0")
	f.Add("$JS.ACK.S.C.1.18446744073709551616.7.1.0")
	f.Add("$JS.ACK._.HASH.S.C.1.42.7.1767225600000000000.0")
	f.Fuzz(func(t *testing.T, s string) {
		wantSeq, wantOK := splitAckSeq(s)
		if seq, ok := parseAckSubject([]byte(s)); seq != wantSeq || ok != wantOK {
			t.Fatalf("%q: got %d %v, want %d %v", s, seq, ok, wantSeq, wantOK)
		}
	})
}

func TestParseAck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		kind ackKind
		arg  string
	}{
		{"", ackAck, ""}, {"+ACK", ackAck, ""}, {"+OK", ackAck, ""},
		{"+NXT", ackNext, ""}, {`+NXT {"batch":2}`, ackNext, `{"batch":2}`},
		{"-NAK", ackNak, ""}, {"-NAK  5s ", ackNak, "5s"},
		{"+WPI", ackInProgress, ""}, {"+TERM why not", ackTerm, "why not"},
		{"+ACK ", ackAck, ""}, {"+ack", ackUnknown, ""}, {"?", ackUnknown, ""},
	} {
		a := parseAck(3, []byte(c.body), "r")
		if a.kind != c.kind || a.arg != c.arg || a.seq != 3 || a.reply != "r" {
			t.Errorf("%q: got %+v, want kind %d arg %q", c.body, a, c.kind, c.arg)
		}
	}
}

// TestAckParsingAllocatesNothing pins the reader goroutine's share of a
// plain ack: the subject's seq and the body's kind, no allocation.
func TestAckParsingAllocatesNothing(t *testing.T) {
	subject := []byte("$JS.ACK.STREAM.CONSUMER.1.123456.123456.1767225600000000000.99")
	body := []byte("+ACK")
	n := testing.AllocsPerRun(100, func() {
		seq, ok := parseAckSubject(subject)
		if !ok || parseAck(seq, body, "").kind != ackAck {
			t.Fatal("not an ack")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per ack", n)
	}
}

// BenchmarkParseAck is the per-ack parsing on the reader goroutine.
func BenchmarkParseAck(b *testing.B) {
	subject := []byte("$JS.ACK.STREAM.CONSUMER.1.123456.123456.1767225600000000000.99")
	body := []byte("+ACK")
	b.ReportAllocs()
	for b.Loop() {
		seq, _ := parseAckSubject(subject)
		_ = parseAck(seq, body, "")
	}
}
