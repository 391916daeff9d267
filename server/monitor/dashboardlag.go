package monitor

import (
	"context"
	"sync"
	"time"
)

// The dashboard's history (docs/dashboard.md): every lagInterval the
// monitor samples each consumer's lag (num_pending) and its own message
// counters, and keeps the last lagSamples samples, so that the dashboard
// draws the last hour without Prometheus. Memory is bounded by
// lagMaxConsumers × lagSamples × 8 bytes (2.9 MB) plus the shared times;
// consumers beyond lagMaxConsumers (in stream, consumer order) get no
// history, and the dashboard says so. Longer history belongs in
// Prometheus (/metrics).
const (
	lagInterval     = 5 * time.Second
	lagSamples      = 720 // an hour at lagInterval
	lagMaxConsumers = 500
	// lagDLQChecks bounds the streams whose first message is read per
	// sample to find dead-letter streams by their headers.
	lagDLQChecks = 16
)

// lagMissing marks a sample taken before a consumer existed.
const lagMissing = ^uint64(0)

// lagRing is the sampled history. It is a plain value driven by add, so
// tests feed it samples with their own times. Safe for concurrent use.
type lagRing struct {
	samples, maxSeries int

	mu    sync.Mutex // guards the fields below
	times []int64    // unix milliseconds of each sample; a ring of samples
	next  int        // where the next sample goes
	n     int        // samples held, at most samples
	// in and out are the server's message counters at each sample.
	in, out []int64
	series  map[consumerKey][]uint64 // lag per sample, lagMissing before the consumer
	// untracked counts the consumers of the last sample that had no
	// room for a series.
	untracked int
	// headerDLQ remembers, per stream, whether its first message (at the
	// seq kept) carries Bus-Dlq-* headers.
	headerDLQ map[string]dlqCheck
}

type consumerKey struct{ stream, consumer string }

type dlqCheck struct {
	firstSeq uint64
	isDLQ    bool
}

func newLagRing(samples, maxSeries int) *lagRing {
	return &lagRing{
		samples:   samples,
		maxSeries: maxSeries,
		times:     make([]int64, samples),
		in:        make([]int64, samples),
		out:       make([]int64, samples),
		series:    map[consumerKey][]uint64{},
		headerDLQ: map[string]dlqCheck{},
	}
}

// add records one sample taken at now: the server's traffic and every
// consumer of m (nil without JetStream). A consumer that is gone loses
// its series; a new one gets a series while there is room.
func (r *lagRing) add(now time.Time, t Counters, m *JetStreamMetrics) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.next
	r.times[i], r.in[i], r.out[i] = now.UnixMilli(), t.InMsgs, t.OutMsgs
	r.next = (r.next + 1) % r.samples
	r.n = min(r.n+1, r.samples)
	seen := map[consumerKey]bool{}
	r.untracked = 0
	if m != nil {
		for _, st := range m.Streams {
			for _, c := range st.Consumers {
				k := consumerKey{st.Name, c.Name}
				seen[k] = true
				s := r.series[k]
				if s == nil {
					if len(r.series) >= r.maxSeries {
						r.untracked++
						continue
					}
					s = make([]uint64, r.samples)
					for j := range s {
						s[j] = lagMissing
					}
					r.series[k] = s
				}
				s[i] = c.NumPending
			}
		}
	}
	for k := range r.series {
		if !seen[k] {
			delete(r.series, k)
		}
	}
}

// lagPoint is one sample of a series: unix milliseconds and a value.
type lagPoint [2]int64

// since returns, oldest first, the samples of stream's consumers taken
// after the unix millisecond after, and how many consumers of the whole
// server have no history.
func (r *lagRing) since(stream string, after int64) (map[string][]lagPoint, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]lagPoint{}
	for k, s := range r.series {
		if k.stream != stream {
			continue
		}
		pts := []lagPoint{}
		r.each(after, func(i int) {
			if s[i] != lagMissing {
				pts = append(pts, lagPoint{r.times[i], int64(min(s[i], 1<<62))})
			}
		})
		out[k.consumer] = pts
	}
	return out, r.untracked
}

// rates returns the server's messages in and out per second between
// consecutive samples taken after the unix millisecond after, each at the
// later sample's time.
func (r *lagRing) rates(after int64) (in, out []lagPoint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	in, out = []lagPoint{}, []lagPoint{}
	prev := -1
	r.each(0, func(i int) {
		if prev >= 0 && r.times[i] > after {
			dt := float64(r.times[i]-r.times[prev]) / 1000
			if dt > 0 {
				in = append(in, lagPoint{r.times[i], int64(float64(max(r.in[i]-r.in[prev], 0)) / dt)})
				out = append(out, lagPoint{r.times[i], int64(float64(max(r.out[i]-r.out[prev], 0)) / dt)})
			}
		}
		prev = i
	})
	return in, out
}

// each calls f with the index of every sample taken after the unix
// millisecond after, oldest first. Called with r.mu held.
func (r *lagRing) each(after int64, f func(i int)) {
	start := (r.next - r.n + r.samples) % r.samples
	for k := range r.n {
		i := (start + k) % r.samples
		if r.times[i] > after {
			f(i)
		}
	}
}

// len reports the samples held and the consumers with a series.
func (r *lagRing) len() (samples, series int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, len(r.series)
}

// isHeaderDLQ reports what the last check of stream's first message
// found.
func (r *lagRing) isHeaderDLQ(stream string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headerDLQ[stream].isDLQ
}

// startLagSampler samples into m.lag every lagInterval, from now until
// the HTTP server shuts down (Shutdown waits for it). Without JetStream
// only the traffic is sampled. Called by Start once it listens, with
// m.mu held.
func (m *Server) startLagSampler() {
	ctx, cancel := context.WithCancel(context.Background())
	m.httpSrv.RegisterOnShutdown(cancel)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		tick := time.NewTicker(lagInterval)
		defer tick.Stop()
		for {
			m.sampleLag(ctx)
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
		}
	}()
}

// sampleLag takes one sample, then looks for dead-letter streams among
// those whose first message changed.
func (m *Server) sampleLag(ctx context.Context) {
	jm := m.src.JetStream()
	m.lag.add(time.Now(), m.src.Counters(), jm)
	if jm == nil {
		return
	}
	r := m.lag
	checks := 0
	live := map[string]bool{}
	for _, st := range jm.Streams {
		live[st.Name] = true
		if st.DeadLetterQueue || st.Msgs == 0 || checks >= lagDLQChecks {
			continue
		}
		r.mu.Lock()
		prev, known := r.headerDLQ[st.Name]
		r.mu.Unlock()
		if known && prev.firstSeq == st.FirstSeq {
			continue
		}
		checks++
		msg, err := m.readMsg(ctx, m.src.ServerRights(), st.Name, st.FirstSeq, true)
		if err != nil {
			continue // gone meanwhile, or shutting down: checked next time
		}
		r.mu.Lock()
		r.headerDLQ[st.Name] = dlqCheck{firstSeq: st.FirstSeq, isDLQ: isDeadLetter(msg.Header)}
		r.mu.Unlock()
	}
	r.mu.Lock()
	for name := range r.headerDLQ {
		if !live[name] {
			delete(r.headerDLQ, name)
		}
	}
	r.mu.Unlock()
}
