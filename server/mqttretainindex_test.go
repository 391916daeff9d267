package server

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// matchesModel is the ten-line model: does pattern match the literal
// subject, token by token.
func matchesModel(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		switch {
		case tok == ">":
			return len(s) > i
		case i >= len(s) || tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(p) == len(s)
}

// TestRetainedIndexModel: random sets, clears and matches against a
// map and the brute-force matcher, including the seq rules (a set never
// goes back to an earlier seq; a clear leaves a later record).
func TestRetainedIndexModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	toks := []string{"a", "b", "c", "dev1", "dev2", "x"}
	subject := func() string {
		n := 1 + rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = toks[rng.IntN(len(toks))]
		}
		return strings.Join(parts, ".")
	}
	pattern := func() string {
		parts := strings.Split(subject(), ".")
		for i := range parts {
			switch rng.IntN(5) {
			case 0:
				parts[i] = "*"
			case 1:
				if i == len(parts)-1 {
					parts[i] = ">"
				}
			}
		}
		return strings.Join(parts, ".")
	}
	var x retainedIndex
	model := map[string]uint64{}
	var seq uint64
	for step := range 20000 {
		switch rng.IntN(4) {
		case 0, 1:
			seq++
			s, at := subject(), seq
			if rng.IntN(4) == 0 && seq > 5 {
				at = seq - 5 // an ack that came back late
			}
			x.set(s, at)
			model[s] = max(model[s], at)
		case 2:
			s, at := subject(), seq
			if rng.IntN(3) == 0 {
				at = seq / 2
			}
			x.remove(s, at)
			if v, ok := model[s]; ok && v <= at {
				delete(model, s)
			}
		case 3:
			p := pattern()
			var got, want []uint64
			x.match(p, func(toks []string, seq uint64) {
				if model[strings.Join(toks, ".")] != seq {
					t.Fatalf("step %d: match %q visited %q at %d, model has %d", step, p, toks, seq, model[strings.Join(toks, ".")])
				}
				got = append(got, seq)
			})
			for s, v := range model {
				if matchesModel(p, s) {
					want = append(want, v)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: match %q = %v, want %v", step, p, got, want)
			}
		}
		if x.size != len(model) {
			t.Fatalf("step %d: size %d, want %d", step, x.size, len(model))
		}
	}
	for s, v := range model {
		x.remove(s, v)
	}
	if x.size != 0 || !x.root.empty() {
		t.Fatalf("emptied index keeps %d entries, root %+v", x.size, x.root)
	}
}

// TestRetainedIndexMemory reports the index's heap per retained topic
// for 100,000 topics of five levels ("site/<n>/dev/<id>/state"), and
// fails past a generous bound so that a change that makes it balloon is
// seen.
func TestRetainedIndexMemory(t *testing.T) {
	const n = 100000
	before := heapAlloc()
	x := &retainedIndex{}
	for i := range n {
		x.set(fmt.Sprintf("site.%d.dev.%d.state", i/1000, i), uint64(i+1))
	}
	per := (heapAlloc() - before) / n
	runtime.KeepAlive(x)
	t.Logf("%d topics: %d bytes per topic", n, per)
	if per > 400 {
		t.Errorf("%d bytes per retained topic, want at most 400", per)
	}
}

func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestRetainedRecordRoundTrip: the record's headers are the reference's,
// a clearing record marks its flags, and a pre-2.10.10 JSON record
// decodes.
func TestRetainedRecordRoundTrip(t *testing.T) {
	r := mqttRetainedRecord{topic: "a/b", origin: "NSRV", source: "dev", flags: 0x03, payload: []byte("x")}
	h := r.header()
	if want := "NATS/1.0\r\nNmqtt-RTopic:a/b\r\nNmqtt-RFlags:3\r\nNmqtt-ROrigin:NSRV\r\nNmqtt-RSource:dev\r\n\r\n"; string(h) != want {
		t.Errorf("header %q, want %q", h, want)
	}
	got, err := decodeRetained(h, r.payload)
	if err != nil || got.topic != r.topic || got.flags != r.flags || got.source != "dev" || string(got.payload) != "x" {
		t.Errorf("decoded %+v, %v", got, err)
	}
	cleared := mqttRetainedRecord{topic: "a/b", flags: 0x01}
	if h := cleared.header(); !strings.Contains(string(h), "Nmqtt-RFlags:-1\r\n") {
		t.Errorf("clearing header %q", h)
	}
	if got, err := decodeRetained(cleared.header(), nil); err != nil || got.flags != 1 {
		t.Errorf("clearing record %+v, %v", got, err)
	}
	legacy := []byte(`{"origin":"o","subject":"a.b","topic":"a/b","msg":"eA==","flags":1,"source":"u"}`)
	if got, err := decodeRetained(nil, legacy); err != nil || got.topic != "a/b" || string(got.payload) != "x" || got.flags != 1 {
		t.Errorf("legacy record %+v, %v", got, err)
	}
	for _, bad := range []string{"NATS/1.0\r\nNmqtt-RFlags:zz\r\n\r\n", "NATS/1.0\r\nNmqtt-RFlags:6\r\n\r\n", "NATS/1.0\r\nNmqtt-RFlags:10\r\n\r\n"} {
		if _, err := decodeRetained([]byte(bad), []byte("x")); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	if _, err := decodeRetained(nil, []byte("not json")); err == nil {
		t.Error("a record without headers or JSON decoded")
	}
}
