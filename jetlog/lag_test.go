package jetlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// lagFilterChoices are the filters the model test gives its lags: literals
// (counted from the summaries), wildcards (kept as the log changes), and
// both together.
var lagFilterChoices = [][]string{
	{"o.>"}, {"o.*.e"}, {"*.3.*"}, {"u.>"}, {"*.*.w", "p.1.w"}, {"o.2.*", "o.>", "p.5.e"},
	{"p.1.w"}, {"p.1.w", "o.6.e"}, {">"}, {}, {"*.*.*"}, {"u.*", "o.1.*", "p.2.*", "*.4.w"},
}

// lagCase is one lag the model test follows: its filters and where its
// reader is.
type lagCase struct {
	filters []string
	lag     *Lag
	from    uint64
}

// TestLagMatchesBruteForce drives a log with random appends on random
// subjects (a few repeating, some new each time), deletes, purges with
// and without a subject, a seq and keep, discard-old limits, max age, msg
// TTLs, rollups, evicted and reloaded sections and restarts, while
// readers with random filters move through it as consumers do (reading
// batches, jumping, going back) or change their filters; after every step
// each lag must equal a count of the stored messages by brute force.
func TestLagMatchesBruteForce(t *testing.T) {
	forEachStore(t, func(t *testing.T, k storeKind) {
		for seed := range uint64(8) {
			t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
				runLagModel(t, k, seed, 400)
			})
		}
	})
}

func runLagModel(t *testing.T, k storeKind, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 30))
	clock := newFakeClock()
	dir := t.TempDir()
	cfg := StreamConfig{Name: "L", Storage: k.storage, MsgTTL: true, Durability: DurabilityNone}
	opts := Options{Now: clock.Now, ExpireEvery: -1, EvictAfter: -1, SegmentSize: 2048,
		IndexCache: NewIndexCache(IndexCacheOptions{MaxBytes: 4096})}
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Error(err)
		}
	}()
	newLag := func() *lagCase {
		f := lagFilterChoices[rng.IntN(len(lagFilterChoices))]
		return &lagCase{filters: f, lag: l.TrackLag(f), from: 1 + rng.Uint64N(l.State().LastSeq+2)}
	}
	lags := []*lagCase{newLag(), newLag(), newLag()}
	unique := 0
	for step := range steps {
		op := lagStep(t, rng, l, clock, &cfg, &unique)
		switch r := rng.IntN(10); {
		case op == "" && r < 1 && k.storage == StorageFile:
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if l, err = Open(dir, cfg, opts); err != nil {
				t.Fatal(err)
			}
			for _, c := range lags {
				c.lag = l.TrackLag(c.filters)
			}
			op = "reopen"
		case op == "" && r < 3:
			i := rng.IntN(len(lags))
			lags[i].lag.Close()
			lags[i] = newLag()
			op = fmt.Sprintf("new filters %q", lags[i].filters)
		case op == "":
			c := lags[rng.IntN(len(lags))]
			switch rng.IntN(4) {
			case 0, 1: // a pull: read a batch, move past it
				msgs, err := l.NextBatch(c.from, c.filters, 1+rng.IntN(20))
				if err == nil {
					c.from = msgs[len(msgs)-1].Seq + 1
				} else if !errors.Is(err, ErrNotFound) {
					t.Fatal(err)
				}
			case 2:
				c.from = 1 + rng.Uint64N(l.State().LastSeq+3)
			case 3:
				c.from -= min(c.from-1, rng.Uint64N(30))
			}
			op = fmt.Sprintf("move %q to %d", c.filters, c.from)
		}
		live := liveMessages(t, l)
		for _, c := range lags {
			if got, want := c.lag.At(c.from), bruteLag(live, c.filters, c.from); got != want {
				t.Fatalf("step %d (%s): lag %q at %d = %d, brute force %d (%d live)", step, op, c.filters, c.from, got, want, len(live))
			}
		}
	}
}

// lagStep changes the log at random and says how, or does nothing and
// returns "".
func lagStep(t *testing.T, rng *rand.Rand, l *Log, clock *fakeClock, cfg *StreamConfig, unique *int) string {
	t.Helper()
	subject := func() string {
		if rng.IntN(5) == 0 {
			*unique++
			return "u." + strconv.Itoa(*unique)
		}
		return fmt.Sprintf("%s.%d.%s", []string{"o", "p"}[rng.IntN(2)], 1+rng.IntN(6), []string{"e", "w"}[rng.IntN(2)])
	}
	st := l.State()
	switch rng.IntN(16) {
	case 0, 1, 2, 3, 4:
		batch := make([]Msg, 1+rng.IntN(12))
		for i := range batch {
			batch[i] = Msg{Subject: subject(), Data: []byte("data")}
			if rng.IntN(6) == 0 {
				batch[i].Header = []byte("NATS/1.0\r\nNats-TTL: " + strconv.Itoa(1+rng.IntN(3)) + "s\r\n\r\n")
			}
		}
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("append %d", len(batch))
	case 5:
		if st.Msgs == 0 {
			return ""
		}
		seq := st.FirstSeq + rng.Uint64N(st.LastSeq-st.FirstSeq+1)
		if err := l.Delete(seq); err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		return fmt.Sprintf("delete %d", seq)
	case 6:
		p := PurgeOptions{}
		if rng.IntN(2) == 0 {
			p.Subject = []string{"o.>", "p.3.*", "*.*.e", "u.>", "o.1.w", ""}[rng.IntN(6)]
		}
		if rng.IntN(3) == 0 {
			p.Seq = st.FirstSeq + rng.Uint64N(st.LastSeq-st.FirstSeq+2)
		}
		if rng.IntN(3) == 0 {
			p.Keep = rng.Uint64N(10)
		}
		if _, err := l.Purge(p); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("purge %+v", p)
	case 7:
		cfg.MaxMsgs, cfg.MaxMsgsPerSubject, cfg.MaxBytes, cfg.MaxAge = 0, 0, 0, 0
		switch rng.IntN(5) {
		case 0:
			cfg.MaxMsgs = int64(20 + rng.IntN(60))
		case 1:
			cfg.MaxMsgsPerSubject = int64(1 + rng.IntN(4))
		case 2:
			cfg.MaxBytes = int64(2000 + rng.IntN(4000))
		case 3:
			cfg.MaxAge = time.Duration(2+rng.IntN(5)) * time.Second
		}
		if err := l.UpdateConfig(*cfg); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("limits msgs %d per subject %d bytes %d age %v", cfg.MaxMsgs, cfg.MaxMsgsPerSubject, cfg.MaxBytes, cfg.MaxAge)
	case 8:
		clock.Advance(time.Duration(1+rng.IntN(2000)) * time.Millisecond)
		if _, err := l.Expire(); err != nil {
			t.Fatal(err)
		}
		return "expire"
	case 9:
		r := []Rollup{RollupSubject, RollupAll}[rng.IntN(2)]
		if rng.IntN(4) != 0 {
			r = RollupSubject
		}
		if _, err := l.Append(Msg{Subject: subject(), Data: []byte("roll")}, Expect{Rollup: r}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("rollup %d", r)
	}
	return ""
}

// liveMessages lists every stored message's seq and subject, read one by
// one.
func liveMessages(t *testing.T, l *Log) []Msg {
	t.Helper()
	var out []Msg
	for m, err := range l.Messages(1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Msg{Seq: m.Seq, Subject: m.Subject})
	}
	return out
}

// bruteLag counts the messages of live at or after from that match any
// of filters (none, "" or ">": all).
func bruteLag(live []Msg, filters []string, from uint64) uint64 {
	var n uint64
	for _, m := range live {
		if m.Seq >= from && (len(filters) == 0 || slices.ContainsFunc(filters, func(f string) bool {
			return f == "" || subjects.Matches(f, m.Subject)
		})) {
			n++
		}
	}
	return n
}

// TestLagConcurrentReaders moves one lag from several goroutines while
// messages are appended and deleted; once they stop, it is still exact,
// and after Close it still answers (counting afresh) while the log no
// longer keeps it.
func TestLagConcurrentReaders(t *testing.T) {
	t.Parallel()
	l := openLog(t, t.TempDir(), StreamConfig{Name: "C", Durability: DurabilityNone}, Options{SegmentSize: 4096})
	lag := l.TrackLag([]string{"o.*.e", "p.>"})
	done := make(chan struct{})
	readers := make(chan error, 2)
	for r := range 2 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for {
				select {
				case <-done:
					readers <- nil
					return
				default:
				}
				lag.At(1 + rng.Uint64N(l.State().LastSeq+1))
			}
		}()
	}
	for i := range 300 {
		batch := []Msg{{Subject: fmt.Sprintf("o.%d.e", i%7)}, {Subject: fmt.Sprintf("p.%d", i)}, {Subject: "q.x"}}
		acks, err := l.AppendBatch(batch, Expect{})
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if err := l.Delete(acks[1].Seq); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	for range 2 {
		if err := <-readers; err != nil {
			t.Fatal(err)
		}
	}
	live := liveMessages(t, l)
	for _, from := range []uint64{1, 100, 450, 901, 2000} {
		if got, want := lag.At(from), bruteLag(live, []string{"o.*.e", "p.>"}, from); got != want {
			t.Fatalf("At(%d) = %d, brute force %d", from, got, want)
		}
	}
	lag.Close()
	if n := len(l.cat.lags); n != 0 {
		t.Fatalf("%d lags kept after Close", n)
	}
	mustAppend(t, l, "p.new", "x")
	if got, want := lag.At(1), bruteLag(liveMessages(t, l), []string{"o.*.e", "p.>"}, 1); got != want {
		t.Fatalf("after Close: At(1) = %d, brute force %d", got, want)
	}
}

// TestLagAfterRestartLoadsNoSection: a lag's first count after a clean
// restart, from the start of a stream whose sections are all unloaded,
// comes from the subject summaries: walking back from the end would read
// every index under Log.mu (a million subjects: seconds before a new
// consumer's first pull reply, long enough for it to time out as
// inactive).
func TestLagAfterRestartLoadsNoSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := StreamConfig{Name: "R", Durability: DurabilityNone}
	opts := Options{SegmentSize: 4096}
	l := openLog(t, dir, cfg, opts)
	for i := range 2000 {
		mustAppend(t, l, "s."+strconv.Itoa(i), "x")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, dir, cfg, opts)
	lag := l.TrackLag([]string{"s.*"})
	defer lag.Close()
	if got := lag.At(1); got != 2000 {
		t.Fatalf("At(1) = %d, want 2000", got)
	}
	if got := lag.At(1500); got != 501 {
		t.Fatalf("At(1500) = %d, want 501", got)
	}
	if loads := l.index.Stats().Loads; loads != 0 {
		t.Fatalf("%d sections loaded to count", loads)
	}
}
