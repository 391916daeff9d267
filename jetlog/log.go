package jetlog

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Msg is a stored message. Slices returned by reads are owned by the
// caller.
type Msg struct {
	Seq     uint64
	Time    time.Time // store time, set by Append
	Subject string
	Header  []byte // NATS header block or nil
	Data    []byte
}

// PubAck is the result of one append.
type PubAck struct {
	Seq       uint64
	Duplicate bool  // the msg id was seen within the window; Seq is the original
	TS        int64 // store time (unix ns) of a message just stored; 0 for a duplicate
}

// State is a snapshot of a stream's totals. An empty stream has
// FirstSeq = LastSeq+1 (FirstSeq 0 and LastSeq 0 before the first append).
type State struct {
	Msgs        uint64
	Bytes       uint64 // record bytes on disk of live messages
	FirstSeq    uint64
	FirstTime   time.Time
	LastSeq     uint64
	LastTime    time.Time
	NumDeleted  uint64 // deleted seqs between FirstSeq and LastSeq
	NumSubjects int
}

// Stats are running counters, for tests and monitoring.
type Stats struct {
	Appends uint64 // messages appended (duplicates excluded)
	Commits uint64 // group-commit writes
	Fsyncs  uint64 // fdatasync calls on segments
	// MarkWrites counts seq.mark replacements (each one file fsync and
	// one directory fsync): at rolls, reservations (one per 4,096 seqs or
	// more), removals of segments, Open and Close. Not in Fsyncs.
	MarkWrites uint64
	// SparseReads counts reads answered from a segment's index file
	// without loading its section (sparseread.go).
	SparseReads uint64
	// BlockReads counts those that read only the index blocks holding
	// their messages (segblocks.go), not the whole index file.
	BlockReads uint64
}

// SeqRange is a closed range of sequences.
type SeqRange struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// RecoveryReport says what Open found and did.
type RecoveryReport struct {
	Clean           bool            // the clean-shutdown marker was present
	Segments        int             // segment files opened
	Scanned         int             // segments read record by record (no usable index)
	Corrupt         []*CorruptError // damaged records; intact ones around them were kept
	Lost            []SeqRange      // sequences missing (the ranges of Losses)
	Losses          []Loss          // what is gone, why, and whether it had been acknowledged
	TornSegment     string          // segment whose torn tail was truncated
	TruncatedBytes  int64           // bytes dropped from that tail
	RebuiltIndexes  []string        // index files rewritten from their segment
	Problems        []string        // other repairs, e.g. a rewritten config
	DedupRestored   bool            // the dedup window came from the clean-shutdown snapshot
	CatalogRestored bool            // the catalog came from the clean-shutdown snapshot; sealed segments load on first use
}

// Loss is a range of sequences recovery found gone: their records are
// missing or damaged. Every seq of the range was assigned (except, after a
// crash, past the durable mark: see Acked) and none of its messages can be
// read; a seq in it that had been deleted before is not a loss.
type Loss struct {
	Stream string `json:"-"` // the stream's name
	SeqRange
	Segment string    `json:"file"`   // the file concerned: the missing segment, or the damaged one
	Reason  string    `json:"reason"` // "segment missing", "corrupt record", "torn tail", ...
	Acked   AckStatus `json:"acked"`  // whether these messages had been acknowledged
}

// AckStatus says whether lost messages had been acknowledged to their
// publishers. See README.md ("Recovery rules") for how recovery decides.
type AckStatus string

// AckStatus values.
const (
	// LossAcked: at or below the durable mark, so acknowledged.
	LossAcked AckStatus = "acked"
	// LossNotAcked: never acknowledged (the torn tail of a commit that
	// never finished its fsync, in DurabilityAlways).
	LossNotAcked AckStatus = "not acked"
	// LossMaybeAcked: above the durable mark; they may have been.
	LossMaybeAcked AckStatus = "maybe acked"
)

// Log is one stream: an append-only, segmented log with limits, dedup and
// a catalog in memory. It is safe for concurrent use. One appender
// goroutine, started by Open and stopped by Close, does every write.
type Log struct {
	dir    string
	fs     FS
	opts   Options
	memory bool
	seal   *sealer // the stream's data key; nil for a plaintext stream

	reqs chan *request // to the appender; Options.AppendQueue deep
	done chan struct{} // closed when the appender has exited
	once sync.Once     // guards sending the close request
	pool sync.Pool     // of *request

	sendMu  sync.RWMutex // held shared while sending on reqs, exclusively to set closing
	closing bool         // Close has begun: nothing more enters reqs

	// DeleteAsync requests wait here rather than on reqs: they must never
	// block, since AppendAsync callbacks, on the appender, make them.
	deferMu   sync.Mutex // guards the two fields below
	deferred  []*request
	deferStop bool          // the appender took its last deferred requests (closing)
	wake      chan struct{} // capacity 1: deferred requests are waiting
	// loadKick (capacity 1) tells the appender that a reader loaded a
	// sealed section: the index cache may be over its bound.
	loadKick chan struct{}

	mu        sync.RWMutex // guards the fields below
	cfg       StreamConfig
	cat       catalog
	fatal     error // sticky: set when the stream stops accepting writes
	closed    bool
	consumers map[*Consumer]struct{} // open consumers, closed with the log

	// pages is the sorted subject list STREAM.INFO pages through
	// (subjectspage.go); it has its own lock, as readers share mu.
	pages subjectPages

	// Owned by the appender goroutine (and by Open before it starts).
	ap      appender
	noAlloc bool // the segment files cannot reserve space (prealloc.go)

	appends     atomic.Uint64
	commits     atomic.Uint64
	fsyncs      atomic.Uint64
	markWrites  atomic.Uint64
	sparseReads atomic.Uint64
	blockReads  atomic.Uint64
	durable     atomic.Uint64 // highest seq known synced
	io          IOStats       // histograms of syncs and commits (stats.go)
	// The active segment's size as of the appender's last write, and
	// that segment's id, for DiskBytes.
	activeSize atomic.Int64
	activeSeg  atomic.Uint64

	// index is Options.IndexCache, or the Log's own (ownIndex) without
	// one; indexCharged is what the Log's sections count in it, kept by
	// the appender (accountSections).
	index        *IndexCache
	ownIndex     bool
	indexCharged int64

	unlock io.Closer  // releases the directory lock; nil without a Locker
	files  *FileCache // Options.FileCache, nil for memory streams

	prefetches sync.WaitGroup // loads outside Log.mu in flight (Log.prefetch); Add under mu

	report   RecoveryReport
	closeErr error // set by the appender before done is closed
}

// durability is the effective mode: memory streams never sync.
func (l *Log) durability() Durability {
	if l.memory {
		return DurabilityNone
	}
	return l.cfg.Durability
}

// Recovery returns what Open found. The report is immutable.
func (l *Log) Recovery() RecoveryReport { return l.report }

// Config returns the stream's config.
func (l *Log) Config() StreamConfig {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.cfg
}

// Stats returns the running counters.
func (l *Log) Stats() Stats {
	return Stats{Appends: l.appends.Load(), Commits: l.commits.Load(), Fsyncs: l.fsyncs.Load(), MarkWrites: l.markWrites.Load(),
		SparseReads: l.sparseReads.Load(), BlockReads: l.blockReads.Load()}
}

// Err returns why the stream stopped accepting writes, or nil.
func (l *Log) Err() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.fatal
}

// State returns the stream's totals.
func (l *Log) State() State {
	l.mu.RLock()
	defer l.mu.RUnlock()
	c := &l.cat
	st := State{
		Msgs:        c.msgs,
		Bytes:       l.accounted(c.bytes, c.msgs),
		FirstSeq:    c.first(),
		LastSeq:     c.last,
		NumDeleted:  c.numDeleted(),
		NumSubjects: len(c.subjects),
	}
	if c.last == 0 {
		st.FirstSeq = 0
	}
	if c.last > 0 && c.lastTS > 0 { // 0: only skips so far
		st.LastTime = time.Unix(0, c.lastTS)
	}
	if _, ts, ok := c.oldest(); ok {
		st.FirstTime = time.Unix(0, ts)
	}
	return st
}

// Close flushes pending tombstones, syncs, writes the index of the active
// segment and the clean-shutdown marker, and stops the appender. Later
// calls return ErrClosed.
func (l *Log) Close() error {
	first := false
	l.once.Do(func() {
		first = true
		l.sendMu.Lock() // waits for senders blocked on a full queue
		l.closing = true
		l.sendMu.Unlock()
		r := &request{op: opClose, done: make(chan struct{}, 1)}
		l.reqs <- r
		<-r.done
		<-l.done
	})
	if !first {
		return ErrClosed
	}
	return l.closeErr
}
