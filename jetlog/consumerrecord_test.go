package jetlog

import (
	"encoding/binary"
	"maps"
	"math/rand/v2"
	"path"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// stateView is what a consumer state is made of, comparable.
type stateView struct {
	Delivered, AckFloor SeqPair
	Pending             map[uint64]Pending
}

func viewOf(s *ConsumerState) stateView {
	v := stateView{Delivered: s.Delivered, AckFloor: s.AckFloor, Pending: map[uint64]Pending{}}
	for seq, p := range s.Pending {
		v.Pending[seq] = *p
	}
	return v
}

func sameView(a, b stateView) bool {
	return a.Delivered == b.Delivered && a.AckFloor == b.AckFloor && maps.Equal(a.Pending, b.Pending)
}

// randomStep makes one step's worth of changes to s, the kinds a
// consumer makes: a pull's run of new deliveries (with gaps, as a filter
// leaves), redeliveries, acks in and out of order, naks, progress, an
// ack-all now and then; the clock moves by a few ns between changes, as
// a real one does.
func randomStep(rng *rand.Rand, s *ConsumerState, next *uint64, clock *fakeClock) {
	switch rng.IntN(6) {
	case 0, 1: // a pull
		for range 1 + rng.IntN(600) {
			*next += 1 + uint64(rng.IntN(3)/2)
			s.Deliver(*next)
			clock.Advance(time.Duration(rng.IntN(400)))
		}
	case 2, 3: // acks, mostly ascending
		seqs := make([]uint64, 0, len(s.Pending))
		for seq := range s.Pending {
			seqs = append(seqs, seq)
		}
		sortUint64(seqs)
		for i, seq := range seqs {
			if rng.IntN(10) == 0 && i > 0 {
				seq = seqs[rng.IntN(i)] // out of order, maybe acked already
			}
			if rng.IntN(4) > 0 {
				s.Ack(seq)
			}
		}
	case 4: // redeliveries, naks and progress
		for seq := range s.Pending {
			switch rng.IntN(4) {
			case 0:
				s.Deliver(seq)
			case 1:
				s.Nak(seq, time.Duration(rng.IntN(1000)))
			case 2:
				s.InProgress(seq)
			}
			clock.Advance(time.Duration(rng.IntN(400)))
		}
	case 5:
		if *next > 0 {
			s.AckAll(uint64(rng.IntN(int(*next))) + 1)
		}
	}
}

func sortUint64(s []uint64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// decodeAll decodes a journal wholly made of intact records.
func decodeAll(t *testing.T, data []byte) []consumerOp {
	t.Helper()
	var ops []consumerOp
	for pos := 0; pos < len(data); {
		var n int
		var ok bool
		if ops, n, ok = journalRecordAt(nil, ops, data, pos); !ok {
			t.Fatalf("record at %d of %d does not decode", pos, len(data))
		}
		pos += n
	}
	return ops
}

// TestConsumerRunRecordsRoundTrip encodes random steps and checks that
// the records decode to exactly the changes made, in order, and that
// replaying them rebuilds the state.
func TestConsumerRunRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 17))
		clock := newFakeClock()
		s := NewConsumerState(time.Second, nil, clock.Now)
		s.record = true
		replayed := NewConsumerState(time.Second, nil, clock.Now)
		var next uint64
		var journal, scratch []byte
		for step := range 40 {
			randomStep(rng, &s, &next, clock)
			var rec []byte
			rec, scratch = appendOps(nil, nil, scratch, s.ops)
			got := decodeAll(t, rec)
			if len(got) != len(s.ops) {
				t.Fatalf("seed %d step %d: %d ops decoded from %d", seed, step, len(got), len(s.ops))
			}
			for i := range got {
				if got[i] != s.ops[i] {
					t.Fatalf("seed %d step %d op %d: decoded %+v, made %+v", seed, step, i, got[i], s.ops[i])
				}
				replayed.replay(got[i])
			}
			journal = append(journal, rec...)
			s.ops = s.ops[:0]
			if !sameView(viewOf(&s), viewOf(&replayed)) {
				t.Fatalf("seed %d step %d: replayed state differs", seed, step)
			}
		}
		if len(decodeAll(t, journal)) == 0 {
			t.Fatal("empty journal")
		}
	}
}

// TestConsumerRunRecordsAreSmall pins what a pull of 500 and its acks
// cost in the journal: a few bytes a message, not the 66 of a record
// each.
func TestConsumerRunRecordsAreSmall(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	s := NewConsumerState(time.Second, nil, clock.Now)
	s.record = true
	for seq := uint64(1); seq <= 500; seq++ {
		s.Deliver(seq)
		clock.Advance(150 * time.Nanosecond) // a real clock moves
	}
	for seq := uint64(1); seq <= 500; seq++ {
		if seq != 250 {
			s.Ack(seq)
		}
	}
	rec, _ := appendOps(nil, nil, nil, s.ops)
	if perMsg := float64(len(rec)) / 500; perMsg > 4 {
		t.Fatalf("%d journal bytes for 500 deliveries and acks: %.1f a message", len(rec), perMsg)
	}
}

// TestConsumerJournalEncodeAllocatesNothing: the journal's encoding of
// a step reuses the consumer's buffers.
func TestConsumerJournalEncodeAllocatesNothing(t *testing.T) {
	clock := newFakeClock()
	s := NewConsumerState(time.Second, nil, clock.Now)
	s.record = true
	for seq := uint64(1); seq <= 500; seq++ {
		s.Deliver(seq)
	}
	for seq := uint64(1); seq <= 500; seq += 2 {
		s.Ack(seq)
	}
	dst, scratch := appendOps(nil, nil, nil, s.ops)
	if n := testing.AllocsPerRun(50, func() { dst, scratch = appendOps(nil, dst[:0], scratch, s.ops) }); n != 0 {
		t.Fatalf("%v allocations per step", n)
	}
}

// BenchmarkConsumerJournalEncode is the journal's encoding of a pull of
// 500 deliveries and then their acks, per message.
func BenchmarkConsumerJournalEncode(b *testing.B) {
	clock := newFakeClock()
	s := NewConsumerState(time.Second, nil, clock.Now)
	s.record = true
	for seq := uint64(1); seq <= 500; seq++ {
		s.Deliver(seq)
		clock.Advance(150 * time.Nanosecond)
	}
	for seq := uint64(1); seq <= 500; seq++ {
		s.Ack(seq)
	}
	var dst, scratch []byte
	b.ReportAllocs()
	for b.Loop() {
		dst, scratch = appendOps(nil, dst[:0], scratch, s.ops)
	}
	b.ReportMetric(float64(len(dst))/500, "B/msg")
}

// runJournal drives a consumer through random steps (lazily written, as
// the server does, so nothing but Close syncs) and returns its file
// system after a clean close and the state it had.
func runJournal(t *testing.T, seed uint64, steps int) (*vfs.MemFS, stateView) {
	t.Helper()
	fsys := vfs.NewMemFS()
	clock := newFakeClock()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys, Now: clock.Now, CompactBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.OpenConsumer("R", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	var next uint64
	for range steps {
		if err := c.ApplyLazy(func(s *ConsumerState) error { randomStep(rng, s, &next, clock); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock()
	want := viewOf(&c.state)
	c.mu.Unlock()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return fsys, want
}

func reopenConsumer(t *testing.T, fsys *vfs.MemFS) (stateView, []*CorruptError) {
	t.Helper()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: fsys, Now: newFakeClock().Now, CompactBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() //nolint:errcheck
	c, err := l.OpenConsumer("R", ConsumerConfig{AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() //nolint:errcheck
	c.mu.Lock()
	defer c.mu.Unlock()
	return viewOf(&c.state), c.Corrupt()
}

// TestConsumerRunRecordsPowerCutAtEveryByte cuts a journal of run
// records at every byte, as a power cut may leave it, and reopens: the
// state is that of the whole records before the cut (a run is kept
// whole or not at all), and a cut is a torn tail, not damage.
func TestConsumerRunRecordsPowerCutAtEveryByte(t *testing.T) {
	t.Parallel()
	fsys, want := runJournal(t, 1, 12)
	jname := path.Join("/s", consumersDir, "R", journalName(0))
	data := readFile(t, fsys, jname)
	if got, corrupt := reopenConsumer(t, fsys.CrashClone(nil)); !sameView(got, want) || len(corrupt) > 0 {
		t.Fatalf("whole journal: state differs from before the close (corrupt %v)", corrupt)
	}
	// ends[i] is where record i ends; model[i] the state after it.
	var ends []int
	var models []stateView
	model := NewConsumerState(time.Second, nil, newFakeClock().Now)
	var ops []consumerOp
	for pos := 0; pos < len(data); {
		var n int
		var ok bool
		ops, n, ok = journalRecordAt(nil, ops[:0], data, pos)
		if !ok {
			t.Fatalf("record at %d does not decode", pos)
		}
		for _, op := range ops {
			model.replay(op)
		}
		pos += n
		ends = append(ends, pos)
		models = append(models, viewOf(&model))
	}
	runs := 0
	for pos := 0; pos < len(data); {
		n, _ := frameLen(data[pos:])
		if r, _ := decodeRecord(data[pos : pos+frameSize+n]); r.kind == kindDeliveredRun || r.kind == kindAckedRun {
			runs++
		}
		pos += frameSize + n
	}
	if runs < 4 {
		t.Fatalf("only %d run records in %d bytes", runs, len(data))
	}
	fresh := NewConsumerState(time.Second, nil, nil)
	empty := viewOf(&fresh)
	for cut := 0; cut <= len(data); cut++ {
		crashed := fsys.CrashClone(nil)
		truncateFile(t, crashed, jname, int64(cut))
		got, corrupt := reopenConsumer(t, crashed)
		expect := empty
		for i, end := range ends {
			if end <= cut {
				expect = models[i]
			}
		}
		if !sameView(got, expect) || len(corrupt) > 0 {
			t.Fatalf("cut at %d of %d: state is not that of the whole records before it (corrupt %v)", cut, len(data), corrupt)
		}
	}
}

// TestConsumerOpensSingleRecordJournal: a journal written before run
// records (a record per change) opens to the same state as the one
// written now.
func TestConsumerOpensSingleRecordJournal(t *testing.T) {
	t.Parallel()
	fsys, want := runJournal(t, 2, 20)
	jname := path.Join("/s", consumersDir, "R", journalName(0))
	ops := decodeAll(t, readFile(t, fsys, jname))
	var old []byte
	for _, op := range ops { // the encoding before run records
		old = appendRecord(old, op.kind, op.stream, op.deadline, "", nil, appendUvarints(op.consumer, op.deliveries))
	}
	writeFile(t, fsys, jname, old)
	if got, corrupt := reopenConsumer(t, fsys); !sameView(got, want) || len(corrupt) > 0 {
		t.Fatalf("single-record journal: state differs (corrupt %v)", corrupt)
	}
}

// TestConsumerRunRecordDamageIsReported: a flipped byte inside a run
// record followed by good ones is damage, reported, and the records
// after it still apply.
func TestConsumerRunRecordDamageIsReported(t *testing.T) {
	t.Parallel()
	fsys, _ := runJournal(t, 3, 6)
	jname := path.Join("/s", consumersDir, "R", journalName(0))
	data := readFile(t, fsys, jname)
	n, _ := frameLen(data)
	r, _ := decodeRecord(data[:frameSize+n])
	if r.kind != kindDeliveredRun && r.kind != kindAckedRun {
		t.Skipf("first record is kind %d", r.kind) // the seed makes it a run
	}
	data[recordFixed+1] ^= 0x40
	writeFile(t, fsys, jname, data)
	if _, corrupt := reopenConsumer(t, fsys); len(corrupt) != 1 || corrupt[0].Offset != 0 {
		t.Fatalf("corrupt = %v, want one at offset 0", corrupt)
	}
}

func readFile(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	data, err := readAll(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t *testing.T, fsys FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendUvarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}
