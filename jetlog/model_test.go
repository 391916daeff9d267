package jetlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// model is the dumb reference the property test compares the log with.
type model struct {
	cfg  StreamConfig
	msgs map[uint64]modelMsg
	last uint64
}

type modelMsg struct {
	subject string
	data    string
	ts      time.Time
}

func (m *model) oldest(subject string) (uint64, bool) {
	var best uint64
	for seq, msg := range m.msgs {
		if (subject == "" || msg.subject == subject) && (best == 0 || seq < best) {
			best = seq
		}
	}
	return best, best != 0
}

func (m *model) count(subject string) int {
	n := 0
	for _, msg := range m.msgs {
		if msg.subject == subject {
			n++
		}
	}
	return n
}

func (m *model) bytes() int64 {
	var n int64
	for _, msg := range m.msgs {
		n += int64(accountedSize(m.cfg.Storage, msg.subject, nil, []byte(msg.data)))
	}
	return n
}

// refuse returns the error a discard-new stream gives, or nil.
func (m *model) refuse(subject, data string) error {
	if m.cfg.Discard != DiscardNew {
		return nil
	}
	if m.cfg.MaxMsgs > 0 && len(m.msgs) >= int(m.cfg.MaxMsgs) {
		return ErrMaxMsgs
	}
	if m.cfg.MaxBytes > 0 && m.bytes()+int64(accountedSize(m.cfg.Storage, subject, nil, []byte(data))) > m.cfg.MaxBytes {
		return ErrMaxBytes
	}
	return nil
}

func (m *model) append(subject, data string, now time.Time) uint64 {
	m.last++
	m.msgs[m.last] = modelMsg{subject, data, now}
	for m.cfg.MaxMsgsPerSubject > 0 && m.count(subject) > int(m.cfg.MaxMsgsPerSubject) {
		seq, _ := m.oldest(subject)
		delete(m.msgs, seq)
	}
	for m.cfg.MaxMsgs > 0 && len(m.msgs) > int(m.cfg.MaxMsgs) {
		seq, _ := m.oldest("")
		delete(m.msgs, seq)
	}
	for m.cfg.MaxBytes > 0 && m.bytes() > m.cfg.MaxBytes {
		seq, _ := m.oldest("")
		delete(m.msgs, seq)
	}
	return m.last
}

func (m *model) expire(now time.Time) {
	if m.cfg.MaxAge <= 0 {
		return
	}
	for seq, msg := range m.msgs {
		if msg.ts.Before(now.Add(-m.cfg.MaxAge)) {
			delete(m.msgs, seq)
		}
	}
}

func (m *model) purge(p PurgeOptions) uint64 {
	var sel []uint64
	for seq := uint64(1); seq <= m.last; seq++ {
		msg, ok := m.msgs[seq]
		if ok && modelMatch(p.Subject, msg.subject) && (p.Seq == 0 || seq < p.Seq) {
			sel = append(sel, seq)
		}
	}
	if p.Keep > 0 {
		// keep the newest Keep of the filter (ignoring the seq bound, as
		// the log does for a filtered purge).
		var all []uint64
		for seq := uint64(1); seq <= m.last; seq++ {
			if msg, ok := m.msgs[seq]; ok && modelMatch(p.Subject, msg.subject) {
				all = append(all, seq)
			}
		}
		if uint64(len(all)) <= p.Keep {
			return 0
		}
		cut := all[len(all)-int(p.Keep)]
		var keepSel []uint64
		for _, s := range sel {
			if s < cut {
				keepSel = append(keepSel, s)
			}
		}
		sel = keepSel
	}
	for _, s := range sel {
		delete(m.msgs, s)
	}
	return uint64(len(sel))
}

func (m *model) state() (first, last, msgs uint64) {
	if len(m.msgs) == 0 {
		if m.last == 0 {
			return 0, 0, 0
		}
		return m.last + 1, m.last, 0
	}
	f, _ := m.oldest("")
	return f, m.last, uint64(len(m.msgs))
}

func propertySeeds() int {
	switch {
	case os.Getenv("JETLOG_LONG") != "":
		return 200
	case raceEnabled:
		return 8
	}
	return 30
}

// TestModel runs random operations against the log and the model and
// requires them to agree after every step.
func TestModel(t *testing.T) {
	configs := map[string]StreamConfig{
		"unlimited":   {},
		"max_msgs":    {MaxMsgs: 7},
		"per_subject": {MaxMsgsPerSubject: 3},
		"max_age":     {MaxAge: 10 * time.Second},
		"max_bytes":   {MaxBytes: 300},
		"discard_new": {MaxMsgs: 6, Discard: DiscardNew},
		"new_bytes":   {MaxBytes: 250, Discard: DiscardNew},
	}
	for name, cfg := range configs {
		t.Run(name, func(t *testing.T) {
			forEachStore(t, func(t *testing.T, k storeKind) {
				for seed := range propertySeeds() {
					cfg := cfg
					cfg.Name, cfg.Storage = "S", k.storage
					runModel(t, cfg, uint64(seed))
					if t.Failed() {
						t.Logf("seed %d", seed)
						return
					}
				}
			})
		})
	}
}

func runModel(t *testing.T, cfg StreamConfig, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	clock := newFakeClock()
	fsys := vfs.NewMemFS()
	opts := Options{FS: fsys, Now: clock.Now, SegmentSize: int64(64 + rng.IntN(512)), ExpireEvery: -1}
	l, err := Open("/s", cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // may already be closed by a reopen step
	m := &model{cfg: cfg.Normalized(), msgs: map[uint64]modelMsg{}}
	subjects := []string{"a.x", "a.y", "b.x", "b.y.z"}
	reopen := func(crash bool) {
		src := fsys
		if crash {
			src = fsys.CrashClone(nil)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		fsys = src
		opts.FS = fsys
		l, err = Open("/s", cfg, opts)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		m.expire(clock.Now())
		if rep := l.Recovery(); len(rep.Corrupt) != 0 {
			t.Fatalf("corruption after reopen: %+v", rep)
		}
	}
	for step := range 150 {
		var op string
		switch r := rng.IntN(100); {
		case r < 55:
			op = "append"
			subj := subjects[rng.IntN(len(subjects))]
			data := fmt.Sprintf("d%d-%d", seed, step)
			ack, err := l.Append(Msg{Subject: subj, Data: []byte(data)}, Expect{})
			if want := m.refuse(subj, data); want != nil || err != nil {
				if !errors.Is(err, want) || want == nil {
					t.Fatalf("step %d append: %v, model %v", step, err, want)
				}
				break
			}
			if want := m.append(subj, data, clock.Now()); ack.Seq != want {
				t.Fatalf("step %d: seq %d, model %d", step, ack.Seq, want)
			}
		case r < 68:
			op = "delete"
			seq := uint64(rng.IntN(int(m.last) + 2))
			err := l.Delete(seq)
			if _, ok := m.msgs[seq]; ok {
				if err != nil {
					t.Fatalf("step %d delete %d: %v", step, seq, err)
				}
				delete(m.msgs, seq)
			} else if !errors.Is(err, ErrNotFound) {
				t.Fatalf("step %d delete missing %d: %v", step, seq, err)
			}
		case r < 74:
			op = "purge"
			p := PurgeOptions{}
			switch rng.IntN(5) {
			case 3:
				p.Keep = uint64(rng.IntN(6))
			case 0:
				p.Subject = subjects[rng.IntN(len(subjects))]
			case 1:
				p.Subject = "a.*"
				p.Keep = uint64(rng.IntN(3))
			case 2:
				p.Seq = uint64(rng.IntN(int(m.last) + 2))
			}
			n, err := l.Purge(p)
			if want := m.purge(p); err != nil || n != want {
				t.Fatalf("step %d purge %+v = %d, %v; model %d", step, p, n, err, want)
			}
		case r < 80:
			op = "expire"
			clock.Advance(time.Duration(rng.IntN(4000)) * time.Millisecond)
			if _, err := l.Expire(); err != nil {
				t.Fatal(err)
			}
			m.expire(clock.Now())
		case r < 84 && cfg.Storage == StorageFile:
			op = "evict"
			evictAll(t, l)
		case r < 92 && cfg.Storage == StorageFile:
			op = "reopen"
			reopen(false)
		case cfg.Storage == StorageFile:
			op = "crash"
			reopen(true)
		default:
			continue
		}
		if op == "reopen" {
			// A clean reopen restores the catalog without loading sections.
			if rep := l.Recovery(); !rep.CatalogRestored {
				t.Fatalf("step %d: clean reopen did not restore the catalog: %+v", step, rep)
			}
		}
		// Skip some comparisons, so that operations also meet sections a
		// reopen left unloaded (comparing reads every message).
		if rng.IntN(3) == 0 && step < 149 {
			continue
		}
		compareModel(t, l, m, rng, fmt.Sprintf("step %d (%s)", step, op))
		if t.Failed() {
			return
		}
	}
}

func compareModel(t *testing.T, l *Log, m *model, rng *rand.Rand, where string) {
	t.Helper()
	first, last, msgs := m.state()
	st := l.State()
	if st.FirstSeq != first || st.LastSeq != last || st.Msgs != msgs {
		t.Fatalf("%s: state %+v, model first %d last %d msgs %d", where, st, first, last, msgs)
	}
	if msgs > 0 && st.NumDeleted != last-first+1-msgs {
		t.Fatalf("%s: deleted %d, model %d", where, st.NumDeleted, last-first+1-msgs)
	}
	// Lookups that touch few sections first, while some may be unloaded.
	for _, msg := range m.msgs {
		at := msg.ts.Add(time.Duration(rng.IntN(3)-1) * time.Millisecond)
		want := last + 1
		for seq, other := range m.msgs {
			if !other.ts.Before(at) && seq < want {
				want = seq
			}
		}
		if got := l.SeqAtTime(at); got != want {
			t.Fatalf("%s: SeqAtTime(%v) = %d, model %d", where, at, got, want)
		}
		break
	}
	for range 4 {
		from := uint64(rng.IntN(int(last) + 2))
		filter := []string{"", "a.x", "b.y.z", "a.*", "*.x", "b.>", "c.x"}[rng.IntN(7)]
		var want, next uint64
		for seq, msg := range m.msgs {
			if seq >= from && modelMatch(filter, msg.subject) {
				want++
				if next == 0 || seq < next {
					next = seq
				}
			}
		}
		if got := l.NumPending(from, filter); got != want {
			t.Fatalf("%s: NumPending(%d, %q) = %d, model %d", where, from, filter, got, want)
		}
		got, err := l.Next(from, filter)
		if next == 0 && !errors.Is(err, ErrNotFound) || next != 0 && (err != nil || got.Seq != next) {
			t.Fatalf("%s: Next(%d, %q) = %d, %v; model %d", where, from, filter, got.Seq, err, next)
		}
	}
	counts := map[string]uint64{}
	for seq := uint64(1); seq <= last+1; seq++ {
		want, ok := m.msgs[seq]
		got, err := l.Get(seq)
		if !ok {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%d) = %+v, %v; model has none", where, seq, got, err)
			}
			continue
		}
		counts[want.subject]++
		if err != nil || got.Subject != want.subject || string(got.Data) != want.data || !got.Time.Equal(want.ts) {
			t.Fatalf("%s: Get(%d) = %+v, %v; model %+v", where, seq, got, err, want)
		}
	}
	gotCounts := l.SubjectCounts("")
	if len(gotCounts) != len(counts) || st.NumSubjects != len(counts) {
		t.Fatalf("%s: subject counts %v, model %v", where, gotCounts, counts)
	}
	for s, n := range counts {
		if gotCounts[s] != n {
			t.Fatalf("%s: subject counts %v, model %v", where, gotCounts, counts)
		}
		lastMsg, err := l.LastBySubject(s)
		var want uint64
		for seq, msg := range m.msgs {
			if msg.subject == s {
				want = max(want, seq)
			}
		}
		if err != nil || lastMsg.Seq != want {
			t.Fatalf("%s: LastBySubject(%q) = %d, %v; model %d", where, s, lastMsg.Seq, err, want)
		}
		if got := l.LastSeqBySubject(s); got != want {
			t.Fatalf("%s: LastSeqBySubject(%q) = %d; model %d", where, s, got, want)
		}
	}
}

// modelMatch is the model's own filter matcher: split on dots, "*" is any
// one token, a last ">" is one or more, "" matches all.
func modelMatch(filter, subject string) bool {
	if filter == "" {
		return true
	}
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, tok := range f {
		switch {
		case tok == ">" && i == len(f)-1:
			return len(s) > i
		case i >= len(s) || tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}
