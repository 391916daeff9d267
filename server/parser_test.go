package server

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// recorder is an opHandler that renders each op as a line of text, so
// tests can compare what was parsed.
type recorder struct{ ops []string }

func (r *recorder) handleOp(o *op) error {
	var s string
	switch o.kind {
	case opPing:
		s = "PING"
	case opPong:
		s = "PONG"
	case opConnect:
		s = fmt.Sprintf("CONNECT %s", o.json)
	case opPub:
		s = fmt.Sprintf("PUB %s reply=%q hdr=%d msg=%q", o.subject, o.reply, o.hdr, o.msg)
	case opSub:
		s = fmt.Sprintf("SUB %s queue=%q sid=%s", o.subject, o.queue, o.sid)
	case opUnsub:
		s = fmt.Sprintf("UNSUB %s max=%d", o.sid, o.max)
	case opInfo:
		s = fmt.Sprintf("INFO %s", o.json)
	case opErr:
		s = fmt.Sprintf("ERR %s", o.text)
	case opLeafSub:
		s = fmt.Sprintf("LS+ %s queue=%q weight=%d", o.subject, o.queue, o.weight)
	case opLeafUnsub:
		s = fmt.Sprintf("LS- %s queue=%q", o.subject, o.queue)
	case opLeafMsg:
		s = fmt.Sprintf("MSG %s reply=%q queues=%q hdr=%d msg=%q", o.subject, o.reply, o.queues, o.hdr, o.msg)
	}
	r.ops = append(r.ops, s)
	return nil
}

// parserCase is an input, the ops it parses to, and the error it ends
// with (nil: none).
type parserCase struct {
	name string
	in   string
	ops  []string
	err  *protoError
}

var parserCases = []parserCase{
	{"ping pong", "PING\r\nPONG\r\n", []string{"PING", "PONG"}, nil},
	{"lower case", "ping\r\npong\n", []string{"PING", "PONG"}, nil},
	{"ping junk", "PING x\r\n", []string{"PING"}, nil},
	{"connect", "CONNECT {\"verbose\":false}\r\n", []string{`CONNECT {"verbose":false}`}, nil},
	{"connect no space", "CONNECT{}\r\n", []string{"CONNECT {}"}, nil},
	{"pub", "PUB a.b 5\r\nhello\r\n", []string{`PUB a.b reply="" hdr=-1 msg="hello"`}, nil},
	{"pub reply", "PUB a r 2\r\nhi\r\n", []string{`PUB a reply="r" hdr=-1 msg="hi"`}, nil},
	{"pub empty", "PUB a 0\r\n\r\n", []string{`PUB a reply="" hdr=-1 msg=""`}, nil},
	{"pub tabs", "PUB\ta\t \tr  2 \r\nhi\r\n", []string{`PUB a reply="r" hdr=-1 msg="hi"`}, nil},
	{"pub payload with crlf", "PUB a 4\r\n\r\n\r\n\r\n", []string{`PUB a reply="" hdr=-1 msg="\r\n\r\n"`}, nil},
	{"hpub", "HPUB a r 12 14\r\nNATS/1.0\r\n\r\nhi\r\n", []string{`PUB a reply="r" hdr=12 msg="NATS/1.0\r\n\r\nhi"`}, nil},
	{"sub", "SUB a.* 1\r\n", []string{`SUB a.* queue="" sid=1`}, nil},
	{"sub queue", "SUB a q 7\r\n", []string{`SUB a queue="q" sid=7`}, nil},
	{"sub double space", "SUB a  1\r\n", []string{`SUB a queue="" sid=1`}, nil},
	{"unsub", "UNSUB 1 \r\n", []string{"UNSUB 1 max=-1"}, nil},
	{"unsub max", "UNSUB 1 5\r\n", []string{"UNSUB 1 max=5"}, nil},
	{"info ignored", "INFO {}\r\nPING\r\n", []string{"PING"}, nil},
	{"ok ignored", "+OK\r\nPING\r\n", []string{"PING"}, nil},
	{"unknown op", "BOGUS\r\n", nil, errUnknownOp},
	{"unknown op early", "X", nil, errUnknownOp},
	{"client msg", "MSG a 1 1\r\n", nil, errUnknownOp},
	{"empty line", "\r\n", nil, errUnknownOp},
	{"pub needs space", "PUB\r\n", nil, errUnknownOp},
	{"unsub needs args", "UNSUB\r\n", nil, errUnknownOp},
	{"bad payload end", "PUB a 1\r\nxy\r\n", nil, errUnknownOp},
	{"pub arg count", "PUB a\r\n", nil, errMalformed},
	{"pub bad size", "PUB a 1x\r\n", nil, errMalformed},
	{"hpub hdr beyond total", "HPUB a 3 2\r\n", nil, errMalformed},
	{"sub arg count", "SUB a\r\n", nil, errMalformed},
	{"client err", "-ERR 'x'\r\n", nil, errMalformed},
	{"max payload", "PUB a 101\r\n", nil, errMaxPayload},
	{"max control line", "SUB " + strings.Repeat("a", 200) + " 1\r\n", nil, errMaxControlLine},
	{"max control line unterminated", "SUB " + strings.Repeat("a", 200), nil, errMaxControlLine},
	{"ops after payload", "PUB a 1\r\nx\r\nPING\r\nSUB b 2\r\n", []string{`PUB a reply="" hdr=-1 msg="x"`, "PING", `SUB b queue="" sid=2`}, nil},
}

// splitters feed the same input in different chunkings.
var splitters = map[string]func(string, *rand.Rand) []string{
	"whole": func(s string, _ *rand.Rand) []string { return []string{s} },
	"bytes": func(s string, _ *rand.Rand) []string {
		out := make([]string, len(s))
		for i := range s {
			out[i] = s[i : i+1]
		}
		return out
	},
	"halves": func(s string, _ *rand.Rand) []string { return []string{s[:len(s)/2], s[len(s)/2:]} },
	"random": func(s string, r *rand.Rand) []string { return randomChunks(s, r) },
}

func randomChunks(s string, r *rand.Rand) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + r.IntN(len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// feed parses chunks in order with a client parser and returns the ops
// and the first error.
func feed(chunks []string) ([]string, error) { return feedParser(newParser(100, 100), chunks) }

// feedParser is feed with parser p.
func feedParser(p *parser, chunks []string) ([]string, error) {
	rec := &recorder{}
	for _, c := range chunks {
		// Copy each chunk into a reused buffer, as the reader does, so
		// any op that kept a reference into it would be caught.
		buf := []byte(c)
		err := p.parse(buf, rec)
		for i := range buf {
			buf[i] = '#'
		}
		if err != nil {
			return rec.ops, err
		}
	}
	return rec.ops, nil
}

func TestParser(t *testing.T) {
	t.Parallel()
	checkParserCases(t, parserCases, feed)
}

// checkParserCases runs every case through feed in every chunking.
func checkParserCases(t *testing.T, cases []parserCase, feed func([]string) ([]string, error)) {
	for _, tc := range cases {
		for name, split := range splitters {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				ops, err := feed(split(tc.in, rand.New(rand.NewPCG(1, uint64(len(tc.in))))))
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("err = %v, want %v", err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if !reflect.DeepEqual(ops, tc.ops) {
					t.Fatalf("ops\n got %q\nwant %q", ops, tc.ops)
				}
			})
		}
	}
}

func TestParserAllocatesNothingPerMessage(t *testing.T) {
	p := newParser(4096, 1<<20)
	buf := []byte("PUB foo.bar reply.1 11\r\nhello world\r\nHPUB foo r 12 14\r\nNATS/1.0\r\n\r\nhi\r\nPING\r\n")
	var h nopHandler
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.parse(buf, h); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("parse allocates %.1f times per run, want 0", allocs)
	}
}

type nopHandler struct{}

func (nopHandler) handleOp(*op) error { return nil }

func BenchmarkParsePub(b *testing.B) {
	for _, size := range []int{16, 128, 1024} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			frame := []byte(fmt.Sprintf("PUB foo.bar %d\r\n%s\r\n", size, strings.Repeat("x", size)))
			buf := []byte(strings.Repeat(string(frame), 64))
			p := newParser(4096, 1<<20)
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if err := p.parse(buf, nopHandler{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
