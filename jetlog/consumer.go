package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Consumer file names inside <stream dir>/consumers/<name>/. Part of the
// disk format (see doc.go).
const (
	consumersDir     = "consumers"
	consumerMetaFile = "consumer.meta" // crc32c + msgpack(ConsumerConfig)
	snapFile         = "state.snap"    // crc32c + msgpack(consumerSnapshot)
	journalPrefix    = "journal."      // journal.<generation>
)

// ConsumerConfig is what jetlog stores for a durable consumer. Raw is
// opaque (the API layer may keep its full config there).
type ConsumerConfig struct {
	Name          string          `msgpack:"name"`
	AckWait       time.Duration   `msgpack:"ack_wait"`
	Backoff       []time.Duration `msgpack:"backoff,omitempty"`
	MaxAckPending int             `msgpack:"max_ack_pending"` // <= 0: unlimited
	Raw           []byte          `msgpack:"raw,omitempty"`
}

type consumerSnapshot struct {
	Gen       uint64    `msgpack:"gen"` // the journal that continues it
	Delivered SeqPair   `msgpack:"delivered"`
	AckFloor  SeqPair   `msgpack:"ack_floor"`
	Pending   []Pending `msgpack:"pending"`
	// GivenUp is ConsumerState.GivenUp; absent from snapshots written
	// before it existed, which had none.
	GivenUp map[uint64]uint64 `msgpack:"given_up,omitempty"`
}

// Consumer is a durable consumer's persisted state: a ConsumerState whose
// changes are journaled append-only and compacted into a snapshot from
// time to time. In DurabilityAlways every change is fdatasynced before the
// method returns (concurrent callers share an fsync). Safe for concurrent
// use. Close it before the Log.
type Consumer struct {
	fs         FS
	seal       *sealer // the stream's: nil for a plaintext one
	dir        string
	durability Durability
	interval   time.Duration
	now        func() time.Time
	compactAt  int64      // journal size that triggers a snapshot
	onClose    func()     // unregisters from the log
	files      *FileCache // the log's, nil without one: holds the journal's descriptor

	mu        sync.Mutex // guards the fields below
	cfg       ConsumerConfig
	state     ConsumerState
	pend      []byte // journal records of changes applied but not yet written
	payload   []byte // reused space for a record's payload (appendOps)
	enqueued  uint64 // updates encoded into pend so far
	err       error  // sticky: set by a failed fsync
	closed    bool
	recovered []*CorruptError

	// ioMu serialises journal I/O. It is taken before mu, never while mu
	// is held, and readers of the state never wait for it.
	ioMu     sync.Mutex
	journal  vfs.File // guarded by ioMu
	gen      uint64   // guarded by ioMu
	size     int64    // guarded by ioMu: bytes in journal
	flushed  uint64   // guarded by ioMu: updates written (and synced in always mode)
	unsynced bool     // guarded by ioMu: written bytes not yet synced
	spare    []byte   // guarded by ioMu: reused write buffer
	lastSync time.Time
}

func validConsumerName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// OpenConsumer opens or creates the durable consumer name of this stream.
// cfg is stored (replacing an earlier one). Damage found in its journal is
// reported by Corrupt(); the consumer is rebuilt from what is intact.
func (l *Log) OpenConsumer(name string, cfg ConsumerConfig) (*Consumer, error) {
	if !validConsumerName(name) {
		return nil, fmt.Errorf("jetlog: open consumer %q: %w", name, ErrBadConsumerName)
	}
	l.mu.RLock()
	closed, durability, interval := l.closed, l.durability(), l.cfg.SyncInterval
	l.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	cfg.Name = name
	c := &Consumer{
		fs:         l.fs,
		dir:        path.Join(l.dir, consumersDir, name),
		durability: durability,
		interval:   interval,
		now:        l.opts.Now,
		compactAt:  l.opts.CompactBytes,
		files:      l.files,
		seal:       l.seal,
		cfg:        cfg,
		state:      NewConsumerState(cfg.AckWait, cfg.Backoff, l.opts.Now),
	}
	c.state.record = true
	// Its directories must be durable before a change is acknowledged.
	if err := vfs.MkdirAllDurable(c.fs, c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("jetlog: open consumer %q: %w", name, err)
	}
	metaName := path.Join(c.dir, consumerMetaFile)
	_, statErr := readAll(c.fs, metaName)
	if err := writeChecked(c.fs, c.seal, metaName, cfg); err != nil {
		return nil, fmt.Errorf("jetlog: store consumer %q config: %w", name, err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// A new consumer: its directories may be left undurable by a
		// process that died creating them (see Log.storeConfig).
		for _, d := range []string{path.Join(l.dir, consumersDir), l.dir} {
			if err := c.fs.SyncDir(d); err != nil {
				return nil, fmt.Errorf("jetlog: open consumer %q: sync dir: %w", name, err)
			}
		}
	}
	if err := c.load(); err != nil {
		if c.journal != nil {
			_ = c.journal.Close() // already failing
		}
		return nil, fmt.Errorf("jetlog: open consumer %q: %w", name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.journal.Close() // nothing was written
		return nil, ErrClosed
	}
	if l.consumers == nil {
		l.consumers = map[*Consumer]struct{}{}
	}
	l.consumers[c] = struct{}{}
	c.onClose = func() {
		l.mu.Lock()
		delete(l.consumers, c)
		l.mu.Unlock()
	}
	return c, nil
}

// ConsumerNames lists the stored consumers of the stream.
func (l *Log) ConsumerNames() ([]string, error) {
	names, err := l.fs.ReadDir(path.Join(l.dir, consumersDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// LoadConsumerConfig reads a stored consumer's config. Errors:
// ErrBadConsumerName, ErrNotFound for a consumer that is not stored, a
// *CorruptError for a damaged config, or the read error.
func (l *Log) LoadConsumerConfig(name string) (ConsumerConfig, error) {
	if !validConsumerName(name) {
		return ConsumerConfig{}, fmt.Errorf("jetlog: load consumer %q config: %w", name, ErrBadConsumerName)
	}
	var cfg ConsumerConfig
	if err := readChecked(l.fs, l.seal, path.Join(l.dir, consumersDir, name, consumerMetaFile), &cfg); err != nil {
		return ConsumerConfig{}, fmt.Errorf("jetlog: load consumer %q config: %w", name, notFound(err))
	}
	return cfg, nil
}

// DeleteConsumer removes a consumer's files. Close it first. Errors:
// ErrBadConsumerName, ErrNotFound for a consumer that is not stored, or
// the file-system error.
func (l *Log) DeleteConsumer(name string) error {
	if !validConsumerName(name) {
		return fmt.Errorf("jetlog: delete consumer %q: %w", name, ErrBadConsumerName)
	}
	dir := path.Join(l.dir, consumersDir, name)
	names, err := l.fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("jetlog: delete consumer %q: %w", name, notFound(err))
	}
	for _, n := range names {
		if err := l.fs.Remove(path.Join(dir, n)); err != nil {
			return fmt.Errorf("jetlog: delete consumer %q: %w", name, err)
		}
	}
	if err := l.fs.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("jetlog: delete consumer %q: %w", name, err)
	}
	return l.fs.SyncDir(path.Join(l.dir, consumersDir))
}

// SetRaw replaces the caller's part of the consumer's config (Raw) and
// stores the config again, durably, as OpenConsumer does.
func (c *Consumer) SetRaw(raw []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg
	cfg.Raw = raw
	if err := writeChecked(c.fs, c.seal, path.Join(c.dir, consumerMetaFile), cfg); err != nil {
		return fmt.Errorf("jetlog: store consumer %q config: %w", cfg.Name, err)
	}
	c.cfg = cfg
	return nil
}

// Corrupt lists damage found when the consumer was opened.
func (c *Consumer) Corrupt() []*CorruptError { return c.recovered }

// Config returns the consumer's config.
func (c *Consumer) Config() ConsumerConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg
}

// ConsumerInfo is a snapshot of a consumer's counters.
type ConsumerInfo struct {
	Delivered      SeqPair
	AckFloor       SeqPair
	NumAckPending  int
	NumRedelivered int
	NumGivenUp     int // seqs given up on and not acked (GiveUp)
}

// Info returns the consumer's counters.
func (c *Consumer) Info() ConsumerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConsumerInfo{
		Delivered:      c.state.Delivered,
		AckFloor:       c.state.AckFloor,
		NumAckPending:  len(c.state.Pending),
		NumRedelivered: c.state.NumRedelivered(),
		NumGivenUp:     len(c.state.GivenUp),
	}
}

// NumAckPending is Info().NumAckPending without Info's count of
// redeliveries, a walk over the pending set: the consumer asks it at
// every delivery step (see BenchmarkMachineFetchJournaled).
func (c *Consumer) NumAckPending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.state.Pending)
}

// PendingSeqs returns the pending stream seqs, ascending.
func (c *Consumer) PendingSeqs() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.state.Pending))
}

// Due returns the pending seqs due for redelivery, in redelivery order.
func (c *Consumer) Due() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Due()
}

// Deliver records a (re)delivery of stream seq and returns its pending
// entry. A first delivery fails with ErrMaxAckPending when the pending
// set is full.
func (c *Consumer) Deliver(seq uint64) (Pending, error) {
	var p Pending
	err := c.update(func(s *ConsumerState) error {
		if _, ok := s.Pending[seq]; !ok && c.cfg.MaxAckPending > 0 && len(s.Pending) >= c.cfg.MaxAckPending {
			return fmt.Errorf("jetlog: deliver seq %d: %w", seq, ErrMaxAckPending)
		}
		p = s.Deliver(seq)
		return nil
	})
	return p, err
}

// Ack acknowledges seq; it reports whether seq was pending.
func (c *Consumer) Ack(seq uint64) (bool, error) {
	var ok bool
	err := c.update(func(s *ConsumerState) error { ok = s.Ack(seq); return nil })
	return ok, err
}

// AckAll acknowledges every pending seq <= seq.
func (c *Consumer) AckAll(seq uint64) (int, error) {
	var n int
	err := c.update(func(s *ConsumerState) error { n = s.AckAll(seq); return nil })
	return n, err
}

// Term stops redelivery of seq.
func (c *Consumer) Term(seq uint64) (bool, error) {
	var ok bool
	err := c.update(func(s *ConsumerState) error { ok = s.Term(seq); return nil })
	return ok, err
}

// Nak schedules seq for redelivery after delay.
func (c *Consumer) Nak(seq uint64, delay time.Duration) (bool, error) {
	var ok bool
	err := c.update(func(s *ConsumerState) error { ok = s.Nak(seq, delay); return nil })
	return ok, err
}

// InProgress restarts the ack wait of seq.
func (c *Consumer) InProgress(seq uint64) (bool, error) {
	var ok bool
	err := c.update(func(s *ConsumerState) error { ok = s.InProgress(seq); return nil })
	return ok, err
}

// Apply runs fn on the state and journals every change it made as one
// write, synced once in DurabilityAlways: a batch of deliveries or acks
// costs one fsync rather than one each. fn must not keep the state.
func (c *Consumer) Apply(fn func(s *ConsumerState) error) error {
	return c.update(fn)
}

// ApplyLazy is Apply without waiting for the fsync: the changes are
// written at once and become durable with the next synced change (or the
// sync interval). Use it for changes whose loss in a power cut only means
// a redelivery, such as deliveries and acks nobody asked to confirm.
func (c *Consumer) ApplyLazy(fn func(s *ConsumerState) error) error {
	return c.updateSync(fn, false)
}

// update runs fn on the state and journals the resulting changes; in
// DurabilityAlways it returns once they are synced. A failed write (for
// example ENOSPC) returns an error wrapping ErrJournalBehind but keeps the
// changes queued, so the journal catches up with memory on the next
// successful write; a failed fsync fences the consumer (ErrWriteFenced).
func (c *Consumer) update(fn func(*ConsumerState) error) error {
	return c.updateSync(fn, c.durability == DurabilityAlways)
}

// updateSync is update with the choice of waiting for an fsync.
func (c *Consumer) updateSync(fn func(*ConsumerState) error, sync bool) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.state.inStep, c.state.stepNow = true, time.Time{}
	err := fn(&c.state)
	c.state.inStep = false
	if err != nil {
		c.mu.Unlock()
		return err
	}
	if len(c.state.ops) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.pend, c.payload = appendOps(c.seal, c.pend, c.payload, c.state.ops)
	c.state.ops = c.state.ops[:0]
	c.enqueued++
	mine := c.enqueued
	c.mu.Unlock()
	return c.flush(mine, sync)
}

// flush writes the queued changes up to update number mine (one caller's
// write covers every update queued before it) and syncs when asked to or
// when the interval has passed.
func (c *Consumer) flush(mine uint64, sync bool) error {
	c.ioMu.Lock()
	defer c.ioMu.Unlock()
	if c.journal == nil {
		return ErrClosed
	}
	c.mu.Lock()
	fenced := c.err
	c.mu.Unlock()
	if fenced != nil {
		return fenced
	}
	if c.flushed >= mine && (!sync || !c.unsynced) {
		return nil
	}
	c.mu.Lock()
	buf, target := c.pend, c.enqueued
	c.pend = c.spare[:0]
	var snap *consumerSnapshot
	if c.size+int64(len(buf)) >= c.compactAt {
		snap = c.snapshotLocked()
	}
	c.mu.Unlock()
	if snap != nil {
		// The snapshot holds every change, the queued ones included.
		c.spare = buf[:0]
		if err := c.compact(snap); err != nil {
			return c.fence(err)
		}
		c.flushed = target
		return nil
	}
	if len(buf) > 0 {
		if _, err := c.journal.WriteAt(buf, c.size); err != nil {
			werr := fmt.Errorf("%w: %w", ErrJournalBehind, err)
			if terr := c.journal.Truncate(c.size); terr != nil {
				return c.fence(fmt.Errorf("%w (truncate: %w)", werr, terr))
			}
			c.mu.Lock()
			c.pend = append(buf, c.pend...) // retried by the next flush
			c.mu.Unlock()
			return werr
		}
		c.size += int64(len(buf))
		c.unsynced = true
	}
	c.spare = buf[:0]
	c.flushed = target
	if sync || c.durability == DurabilityInterval && time.Since(c.lastSync) >= c.interval {
		return c.syncLocked()
	}
	return nil
}

// syncLocked fdatasyncs the journal; c.ioMu is held.
func (c *Consumer) syncLocked() error {
	if !c.unsynced {
		return nil
	}
	if err := c.journal.Sync(); err != nil {
		return c.fence(fmt.Errorf("jetlog: consumer journal fsync: %w", err))
	}
	c.unsynced = false
	c.lastSync = time.Now() // real time: the sync interval is about I/O
	return nil
}

// fence records a fatal error: the consumer accepts no more changes.
func (c *Consumer) fence(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: %w", ErrWriteFenced, err)
	}
	return c.err
}

// snapshotLocked copies the state; c.mu is held.
func (c *Consumer) snapshotLocked() *consumerSnapshot {
	snap := &consumerSnapshot{Delivered: c.state.Delivered, AckFloor: c.state.AckFloor, GivenUp: maps.Clone(c.state.GivenUp)}
	snap.Pending = make([]Pending, 0, len(c.state.Pending))
	for _, p := range c.state.Pending {
		snap.Pending = append(snap.Pending, *p)
	}
	return snap
}

// Close writes and syncs the queued changes and closes the journal.
// Log.Close closes the consumers still open.
func (c *Consumer) Close() error {
	err := c.close()
	if !errors.Is(err, ErrClosed) && c.onClose != nil {
		c.onClose()
	}
	return err
}

func (c *Consumer) close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.closed = true
	fenced := c.err != nil
	target := c.enqueued
	c.mu.Unlock()
	var err error
	if !fenced {
		err = c.flush(target, true)
	}
	c.ioMu.Lock()
	defer c.ioMu.Unlock()
	if cerr := c.journal.Close(); err == nil {
		err = cerr
	}
	c.journal = nil
	return err
}

// syncIfDirty writes and syncs queued changes (interval mode).
func (c *Consumer) syncIfDirty() error {
	c.mu.Lock()
	if c.closed || c.err != nil {
		c.mu.Unlock()
		return nil
	}
	target := c.enqueued
	c.mu.Unlock()
	return c.flush(target, true)
}
