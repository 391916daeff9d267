package jetstream

import (
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// publishStats counts a stream's publishes for monitoring. The appender
// goroutine (stored) and the publishers' readers (refused) update it
// with atomics; it allocates nothing per message.
type publishStats struct {
	accepted   atomic.Uint64 // stored and acked (duplicates not counted)
	duplicates atomic.Uint64 // acked as duplicates of a msg id in the window
	refused    atomic.Uint64 // answered with an error (limits, preconditions, store)
	// latency is from capture to the ack, in nanoseconds, of every
	// publish stored or found a duplicate.
	latency *jetlog.Histogram
}

func newPublishStats() publishStats {
	return publishStats{latency: jetlog.NewHistogram(latencyBounds)}
}

// latencyBounds are the buckets of the publish-to-ack latency, in
// nanoseconds: 50µs to 5s. Never changed (snapshots share it).
var latencyBounds = []uint64{
	50e3, 100e3, 250e3, 500e3,
	1e6, 2.5e6, 5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6,
	1e9, 2.5e9, 5e9,
}

// stored counts a publish acked after it was captured at start.
// see BenchmarkJetStream
func (p *publishStats) stored(start time.Time, duplicate bool) {
	if duplicate {
		p.duplicates.Add(1)
	} else {
		p.accepted.Add(1)
	}
	p.latency.Observe(uint64(time.Since(start)))
}

// Metrics is a snapshot of JetStream for /metrics: counters and state that
// are kept in memory, so that taking it reads no message and costs a few
// microseconds per stream and consumer.
type Metrics struct {
	Now             time.Time // the service's clock, for ages
	StoreDir        string
	APITotal        int64 // API requests
	APIErrors       int64 // of them answered with an error
	DeadLettered    int64 // messages given up on, all consumers
	DeadLettersLost int64 // dead letters nothing stored
	Damaged         int   // streams on disk that could not be opened
	// Index is the in-memory indexes of sealed segments, every stream;
	// Files the segment and journal files open.
	Index jetlog.IndexCacheStats
	Files jetlog.FileCacheStats
	// SharedCaches says Index and Files are of Options.Caches, which
	// other services share: a sum over services counts them once.
	SharedCaches bool
	// SyncLatency sums every stream's fsync latencies (nanoseconds) and
	// CommitSizes their group commits (messages per commit).
	SyncLatency, CommitSizes jetlog.HistogramSnapshot
	Streams                  []StreamMetrics // by name
}

// StreamMetrics is one stream in Metrics.
type StreamMetrics struct {
	Name      string
	Memory    bool // memory storage
	State     jetlog.State
	MaxMsgs   int64 // limits; -1 for none
	MaxBytes  int64
	DiskBytes int64 // of its segment files (memory: held in memory)
	// DeadLetterQueue is whether the stream captures some consumer's
	// dead-letter subject.
	DeadLetterQueue bool
	Accepted        uint64
	Duplicates      uint64
	Refused         uint64
	AckLatency      jetlog.HistogramSnapshot // nanoseconds
	Consumers       []ConsumerMetrics        // by name
}

// ConsumerMetrics is one consumer in Metrics.
type ConsumerMetrics struct {
	Name            string
	NumPending      uint64 // the lag: messages not yet delivered
	NumAckPending   int
	NumRedelivered  int
	NumWaiting      int
	Delivered       jetlog.SeqPair
	AckFloor        jetlog.SeqPair
	DeadLettered    int64
	DeadLettersLost int64
	// LastDelivered and LastAcked are when the last message went out
	// and the last ack came in; zero for never (since it started).
	LastDelivered, LastAcked time.Time
	// Oldest is the store time of the oldest message the consumer has
	// not processed (not acked, or not delivered); zero when there is
	// none.
	Oldest time.Time
}

// Metrics snapshots every stream and consumer.
func (svc *Service) Metrics() Metrics {
	out := Metrics{
		Now:             svc.sh.now(),
		StoreDir:        svc.dir,
		APITotal:        svc.apiTotal.Load(),
		APIErrors:       svc.apiErrors.Load(),
		DeadLettered:    svc.sh.deadLettered.Load(),
		DeadLettersLost: svc.sh.deadLettersLost.Load(),
		Index:           svc.sh.index.Stats(),
		SharedCaches:    svc.caches != nil,
	}
	if svc.sh.files != nil {
		out.Files = svc.sh.files.Stats()
	}
	svc.mu.Lock()
	out.Damaged = len(svc.damaged)
	svc.mu.Unlock()
	streams := svc.sortedStreams()
	out.Streams = make([]StreamMetrics, len(streams))
	// The dead-letter subjects, to mark the streams that capture them.
	dlq := map[string]struct{}{}
	for i, st := range streams {
		s := &out.Streams[i]
		st.metrics(s, dlq)
		io := st.log.IOStats()
		if i == 0 {
			out.SyncLatency = io.SyncLatency.Snapshot()
			out.CommitSizes = io.CommitSizes.Snapshot()
		} else {
			out.SyncLatency.AddTo(io.SyncLatency)
			out.CommitSizes.AddTo(io.CommitSizes)
		}
	}
	if len(dlq) > 0 {
		index := make(map[string]int, len(streams))
		for i, st := range streams {
			index[st.name] = i
		}
		for subj := range dlq {
			for _, name := range svc.owners.MatchString(subj).Plain {
				if i, ok := index[name]; ok {
					out.Streams[i].DeadLetterQueue = true
				}
			}
		}
	}
	return out
}

// metrics fills s with the stream's numbers, and adds its consumers'
// dead-letter subjects to dlq.
func (st *stream) metrics(s *StreamMetrics, dlq map[string]struct{}) {
	cfg := st.config()
	*s = StreamMetrics{
		Name:       st.name,
		Memory:     cfg.Storage == jetlog.StorageMemory,
		State:      st.log.State(),
		MaxMsgs:    cfg.MaxMsgs,
		MaxBytes:   cfg.MaxBytes,
		DiskBytes:  st.log.DiskBytes(),
		Accepted:   st.publishes.accepted.Load(),
		Duplicates: st.publishes.duplicates.Load(),
		Refused:    st.publishes.refused.Load(),
		AckLatency: st.publishes.latency.Snapshot(),
	}
	consumers := st.sortedConsumers()
	s.Consumers = make([]ConsumerMetrics, len(consumers))
	for i, c := range consumers {
		c.metrics(&s.Consumers[i])
		if d := c.cfg.DeadLetterSubject; d != "" {
			dlq[d] = struct{}{}
		}
	}
}

// metrics fills s with the consumer's numbers, as info counts them.
func (c *consumer) metrics(s *ConsumerMetrics) {
	li := c.ledger.Info()
	c.mu.Lock()
	waiting, next, dead, initial := c.waiting, c.next, c.dead, c.initial
	c.mu.Unlock()
	floor := li.AckFloor
	if li.NumAckPending == 0 && li.NumGivenUp == 0 {
		floor = li.Delivered
	}
	filters := c.cfg.filters()
	*s = ConsumerMetrics{
		Name:            c.name,
		NumPending:      uint64(initial) + c.src.NumPending(next, filters),
		NumAckPending:   li.NumAckPending,
		NumRedelivered:  li.NumRedelivered,
		NumWaiting:      waiting,
		Delivered:       li.Delivered,
		AckFloor:        floor,
		DeadLettered:    dead,
		DeadLettersLost: c.lostDead.Load(),
		LastDelivered:   unixTime(c.lastDelivered.Load()),
		LastAcked:       unixTime(c.lastAcked.Load()),
	}
	// Everything at or below the ack floor is processed, and the lowest
	// pending seq is just above it; with nothing pending, the oldest
	// unprocessed message is the next one to deliver.
	from := next
	if li.NumAckPending > 0 {
		from = li.AckFloor.Stream + 1
	}
	if _, at, ok := c.src.log.OldestMatching(from, filters); ok {
		s.Oldest = at
	}
}

// unixTime is the time of unix nanoseconds, zero for 0.
func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
