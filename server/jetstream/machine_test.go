package jetstream

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

// TestMachineTranscripts drives the consumer state machine with a fake
// clock and a fake stream through the scenarios in testdata/*.txt and
// compares every step's actions with the transcript. Run with -update to
// rewrite them; review the diff like code.
//
// A transcript is blocks of one command, a "----" line and the expected
// output, separated by blank lines; lines starting with # are comments.
// Commands:
//
//	consumer <json config>      a new machine on the stream (again: a reset)
//	publish <subject> [data]     store a message, then Stored
//	publish-many <subject> <n> <size>  store n messages of size bytes
//	publish-with <subject> <Key:Value,...> <data>  a message with headers
//	pull <inbox> [body]          a MSG.NEXT request
//	ack <seq> <body> [reply]     an ack on the delivery of stream seq
//	tick <duration>              advance the clock, then Tick
//	delivered <duration>         the last step's deliveries went out that
//	                             long after it (a slow read), then Delivered
//	interest <subject> on|off    whether a subject has a listener, then Interest
//	refuse <subject> on|off      whether a push subscriber may not receive a
//	                             stored message on subject, then Interest
//	fc                           the flow-control answer
//	close <status>               the consumer is deleted
//	unpin <group>                $JS.API.CONSUMER.UNPIN for a priority group
//	state                        the ledger: delivered, ack floor, pending
//	restart                      the same consumer again from its ledger
func TestMachineTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/machine_*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness()
	var out strings.Builder
	for _, block := range strings.Split(strings.TrimSpace(string(raw)), "\n\n") {
		cmd, want, ok := strings.Cut(block, "\n----")
		if !ok {
			t.Fatalf("%s: block without ----:\n%s", file, block)
		}
		var lines []string
		for _, l := range strings.Split(cmd, "\n") {
			if strings.HasPrefix(l, "#") {
				out.WriteString(l + "\n")
				continue
			}
			lines = append(lines, l)
		}
		if len(lines) != 1 {
			t.Fatalf("%s: want one command per block, got %q", file, lines)
		}
		got := h.run(t, lines[0])
		out.WriteString(lines[0] + "\n----\n" + got + "\n\n")
		if !*update && strings.TrimSpace(want) != strings.TrimSpace(got) {
			t.Errorf("%s: %s\n got:\n%s\nwant:\n%s", file, lines[0], got, strings.TrimSpace(want))
		}
	}
	if *update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeStream is a source over messages in memory.
type fakeStream struct {
	msgs    []jetlog.Msg // seq i+1 at index i; a zero Seq is deleted
	deaf    map[string]bool
	refused map[string]bool // stored subjects no subscriber may receive
}

func (f *fakeStream) Get(seq uint64) (jetlog.Msg, error) {
	if seq == 0 || seq > uint64(len(f.msgs)) || f.msgs[seq-1].Seq == 0 {
		return jetlog.Msg{}, jetlog.ErrNotFound
	}
	return f.msgs[seq-1], nil
}

func (f *fakeStream) Next(seq uint64, filters []string) (jetlog.Msg, error) {
	for s := max(seq, 1); s <= uint64(len(f.msgs)); s++ {
		m := f.msgs[s-1]
		if m.Seq == 0 {
			continue
		}
		if len(filters) == 0 || slices.ContainsFunc(filters, func(p string) bool { return subjects.Matches(p, m.Subject) }) {
			return m, nil
		}
	}
	return jetlog.Msg{}, jetlog.ErrNotFound
}

func (f *fakeStream) NextBatch(seq uint64, filters []string, max int) ([]jetlog.Msg, error) {
	var out []jetlog.Msg
	for len(out) < max {
		m, err := f.Next(seq, filters)
		if err != nil {
			break
		}
		out = append(out, m)
		seq = m.Seq + 1
	}
	if len(out) == 0 {
		return nil, jetlog.ErrNotFound
	}
	return out, nil
}

func (f *fakeStream) LastSeq() uint64 { return uint64(len(f.msgs)) }

func (f *fakeStream) NumPending(seq uint64, filters []string) uint64 {
	n := uint64(0)
	for s := max(seq, 1); s <= uint64(len(f.msgs)); s++ {
		m := f.msgs[s-1]
		if m.Seq != 0 && (len(filters) == 0 || slices.ContainsFunc(filters, func(p string) bool { return subjects.Matches(p, m.Subject) })) {
			n++
		}
	}
	return n
}

func (f *fakeStream) HasInterest(subject string) bool { return !f.deaf[subject] }

// FiltersStored: a refused subject may be listed at any time.
func (f *fakeStream) FiltersStored(string) bool { return true }

// MayDeliver: the subjects listed in refused reach no one.
func (f *fakeStream) MayDeliver(inbox, subject string) bool {
	return !f.deaf[inbox] && !f.refused[subject]
}

type harness struct {
	start, now time.Time
	src        *fakeStream
	led        *memLedger
	m          *machine
	cfg        consumerConfig // the last consumer command's, normalized
	newID      func() string  // pin ids: pin-1, pin-2, ...
}

func newHarness() *harness {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &harness{start: t0, now: t0, src: &fakeStream{deaf: map[string]bool{}, refused: map[string]bool{}}, newID: pinCounter()}
}

func (h *harness) clock() time.Time { return h.now }

func (h *harness) run(t *testing.T, line string) string {
	verb, rest, _ := strings.Cut(line, " ")
	if verb == "publish" && h.m == nil {
		subject, data, _ := strings.Cut(rest, " ")
		h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: uint64(len(h.src.msgs) + 1), Subject: subject, Data: []byte(data), Time: h.now})
		return "stored"
	}
	if verb != "consumer" && h.m == nil {
		t.Fatalf("%q before a consumer", line)
	}
	switch verb {
	case "consumer":
		var cfg consumerConfig
		if err := json.Unmarshal([]byte(rest), &cfg); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
			return "error " + e.Description
		}
		backoff := make([]time.Duration, len(cfg.BackOff))
		for i, b := range cfg.BackOff {
			backoff[i] = time.Duration(b)
		}
		h.led = newMemLedger(jetlog.NewConsumerState(ledgerAckWait(cfg), backoff, h.clock))
		start := max(cfg.OptStartSeq, 1)
		if cfg.DeliverPolicy == DeliverNew {
			start = h.src.LastSeq() + 1
		}
		h.cfg = cfg
		h.m = newMachine(machineConfig{
			stream: "S", cfg: cfg, src: h.src, ledger: h.led, now: h.now, start: start,
			random: func() float64 { return 0.75 }, // jitter: +half the fraction
			newID:  h.newID,
		})
		return h.render(h.m.Stored(h.now))
	case "restart": // as startPosition resumes a consumer that delivered before
		h.m = newMachine(machineConfig{
			stream: "S", cfg: h.cfg, src: h.src, ledger: h.led, now: h.now, start: h.led.Info().Delivered.Stream + 1,
			random: func() float64 { return 0.75 },
			newID:  h.newID,
		})
		return h.render(h.m.Stored(h.now))
	case "publish":
		subject, data, _ := strings.Cut(rest, " ")
		seq := uint64(len(h.src.msgs) + 1)
		h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: seq, Subject: subject, Data: []byte(data), Time: h.now})
		return h.render(h.m.Stored(h.now))
	case "publish-with":
		f := strings.SplitN(rest, " ", 3)
		if len(f) != 3 {
			t.Fatalf("%s: want publish-with <subject> <Key:Value,...> <data>", line)
		}
		hdr := []byte("NATS/1.0\r\n")
		for _, kv := range strings.Split(f[1], ",") {
			k, v, _ := strings.Cut(kv, ":")
			hdr = append(hdr, k+": "+v+"\r\n"...)
		}
		hdr = append(hdr, "\r\n"...)
		seq := uint64(len(h.src.msgs) + 1)
		h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: seq, Subject: f[0], Header: hdr, Data: []byte(f[2]), Time: h.now})
		return h.render(h.m.Stored(h.now))
	case "publish-many":
		var subject string
		var count, size int
		if _, err := fmt.Sscanf(rest, "%s %d %d", &subject, &count, &size); err != nil {
			t.Fatalf("%s: want publish-many <subject> <count> <size>: %v", line, err)
		}
		for range count {
			seq := uint64(len(h.src.msgs) + 1)
			h.src.msgs = append(h.src.msgs, jetlog.Msg{Seq: seq, Subject: subject, Data: bytes.Repeat([]byte("x"), size), Time: h.now})
		}
		return h.render(h.m.Stored(h.now))
	case "pull":
		inbox, body, _ := strings.Cut(rest, " ")
		return h.render(h.m.Pull(inbox, []byte(body), h.now))
	case "ack":
		f := strings.Fields(rest)
		seq, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || len(f) < 2 {
			t.Fatalf("%s: want ack <seq> <body> [reply]", line)
		}
		reply := ""
		if len(f) > 2 {
			reply = f[2]
		}
		a := parseAck(seq, []byte(strings.ReplaceAll(f[1], "_", " ")), reply)
		return h.render(h.m.Acks([]ackMsg{a}, h.now))
	case "tick":
		d, err := time.ParseDuration(rest)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		h.now = h.now.Add(d)
		return h.render(h.m.Tick(h.now))
	case "delivered":
		d, err := time.ParseDuration(rest)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		h.now = h.now.Add(d)
		return h.render(actions{deadline: h.m.Delivered(h.now)})
	case "interest":
		subject, onOff, _ := strings.Cut(rest, " ")
		h.src.deaf[subject] = onOff == "off"
		return h.render(h.m.Interest(h.now))
	case "refuse":
		subject, onOff, _ := strings.Cut(rest, " ")
		h.src.refused[subject] = onOff == "on"
		return h.render(h.m.Interest(h.now))
	case "fc": // answers the latest request, with a last stream seq if given
		a := flowControlAnswer{subject: h.m.fcReply}
		if rest != "" {
			n, err := strconv.ParseUint(rest, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			a.lastStream = n
		}
		return h.render(h.m.FlowControlReply(a, h.now))
	case "close":
		return h.render(h.m.Close(rest))
	case "unpin":
		return h.render(h.m.Unpin(rest, h.now))
	case "state":
		return h.state()
	}
	t.Fatalf("unknown command %q", line)
	return ""
}

// render prints a step's actions, one per line, with times relative to
// the start of the transcript.
func (h *harness) render(a actions) string {
	var b strings.Builder
	for _, o := range a.out {
		switch {
		case o.deliver:
			data := fmt.Sprintf("%q", o.data)
			if len(o.data) > 32 {
				data = fmt.Sprintf("<%d bytes>", len(o.data))
			}
			fmt.Fprintf(&b, "deliver %s %s %s ack=%s", o.to, o.subject, data, strings.TrimPrefix(o.reply, h.m.ackBase))
			if len(o.hdr) > 0 {
				fmt.Fprintf(&b, " hdr=%q", o.hdr)
			}
		default:
			fmt.Fprintf(&b, "send %s", o.to)
			if o.reply != "" {
				fmt.Fprintf(&b, " reply=%s", o.reply)
			}
			if len(o.hdr) > 0 {
				fmt.Fprintf(&b, " %q", bytes.TrimSuffix(o.hdr, []byte("\r\n\r\n")))
			}
			if len(o.data) > 0 {
				data := o.data
				if bytes.HasPrefix(data, []byte(`{"type":"io.nats.jetstream.advisory`)) {
					data = []byte(advisorySummary(data))
				}
				fmt.Fprintf(&b, " %s", data)
			}
		}
		b.WriteString("\n")
	}
	if len(a.acked) > 0 {
		fmt.Fprintf(&b, "acked %v\n", a.acked)
	}
	if a.dead > 0 {
		fmt.Fprintf(&b, "dead-lettered %d\n", a.dead)
	}
	if a.expired {
		b.WriteString("expired\n")
	}
	if a.err != nil {
		fmt.Fprintf(&b, "error %v\n", a.err)
	}
	if a.deadline.IsZero() {
		b.WriteString("no timer")
	} else {
		fmt.Fprintf(&b, "timer at %v", a.deadline.Sub(h.start))
	}
	return b.String()
}

func (h *harness) state() string {
	var b strings.Builder
	_ = h.led.Update(func(s *jetlog.ConsumerState) {
		fmt.Fprintf(&b, "delivered %d/%d floor %d/%d", s.Delivered.Stream, s.Delivered.Consumer, s.AckFloor.Stream, s.AckFloor.Consumer)
		seqs := make([]uint64, 0, len(s.Pending))
		for seq := range s.Pending {
			seqs = append(seqs, seq)
		}
		slices.Sort(seqs)
		for _, seq := range seqs {
			p := s.Pending[seq]
			if isTombstone(p) {
				fmt.Fprintf(&b, "\npending %d deliveries=%d tombstone", seq, p.Deliveries)
				continue
			}
			fmt.Fprintf(&b, "\npending %d deliveries=%d due at %v", seq, p.Deliveries, time.Unix(0, p.Deadline).Sub(h.start))
		}
		for _, seq := range slices.Sorted(maps.Keys(s.GivenUp)) {
			fmt.Fprintf(&b, "\ngiven up %d deliveries=%d", seq, s.GivenUp[seq])
		}
	}, false)
	fmt.Fprintf(&b, "\nwaiting %d next %d", h.m.numWaiting(), h.m.next)
	if h.m.groups != nil {
		b.WriteString(describeGroups(h.m.groups))
	}
	return b.String()
}
