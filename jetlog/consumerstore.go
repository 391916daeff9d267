package jetlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// Consumer file names inside <stream dir>/consumers/<name>/. Part of the
// disk format (see doc.go).
const (
	consumersDir     = "consumers"
	consumerMetaFile = "consumer.meta" // crc32c + msgpack(ConsumerConfig)
	snapFile         = "state.snap"    // crc32c + msgpack(consumerSnapshot)
	journalPrefix    = "journal."      // journal.<generation>
)

// ErrMaxAckPending is returned by Consumer.Deliver for a first delivery
// while MaxAckPending messages are pending.
var ErrMaxAckPending = errors.New("jetlog: maximum ack pending reached")

// ErrBadConsumerName is returned for an empty name or one that is not a
// single path element.
var ErrBadConsumerName = errors.New("jetlog: invalid consumer name")

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
}

// Consumer is a durable consumer's persisted state: a ConsumerState whose
// changes are journaled append-only and compacted into a snapshot from
// time to time. In DurabilityAlways every change is fdatasynced before the
// method returns (concurrent callers share an fsync). Safe for concurrent
// use. Close it before the Log.
type Consumer struct {
	fs         FS
	dir        string
	durability Durability
	interval   time.Duration
	now        func() time.Time
	compactAt  int64  // journal size that triggers a snapshot
	onClose    func() // unregisters from the log

	mu        sync.Mutex // guards the fields below
	cfg       ConsumerConfig
	state     ConsumerState
	journal   File
	gen       uint64
	size      int64 // bytes in journal
	written   uint64
	buf       []byte
	lastSync  time.Time
	err       error // sticky fsync failure
	closed    bool
	recovered []*CorruptError

	syncMu sync.Mutex // serialises fsyncs; taken without mu held
	synced uint64     // guarded by syncMu: write count known durable
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
		cfg:        cfg,
		state:      NewConsumerState(cfg.AckWait, cfg.Backoff, l.opts.Now),
	}
	if err := c.fs.MkdirAll(c.dir, 0o755); err != nil {
		return nil, fmt.Errorf("jetlog: open consumer %q: %w", name, err)
	}
	if err := writeChecked(c.fs, path.Join(c.dir, consumerMetaFile), cfg); err != nil {
		return nil, fmt.Errorf("jetlog: store consumer %q config: %w", name, err)
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

// LoadConsumerConfig reads a stored consumer's config.
func (l *Log) LoadConsumerConfig(name string) (ConsumerConfig, error) {
	var cfg ConsumerConfig
	err := readChecked(l.fs, path.Join(l.dir, consumersDir, name, consumerMetaFile), &cfg)
	return cfg, err
}

// DeleteConsumer removes a consumer's files. Close it first.
func (l *Log) DeleteConsumer(name string) error {
	if !validConsumerName(name) {
		return fmt.Errorf("jetlog: delete consumer %q: %w", name, ErrBadConsumerName)
	}
	dir := path.Join(l.dir, consumersDir, name)
	names, err := l.fs.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("jetlog: delete consumer %q: %w", name, err)
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
	}
}

// PendingSeqs returns the pending stream seqs, ascending.
func (c *Consumer) PendingSeqs() []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]uint64, 0, len(c.state.Pending))
	for seq := range c.state.Pending {
		out = append(out, seq)
	}
	slices.Sort(out)
	return out
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

// update runs fn on the state, journals the resulting ops and, in
// DurabilityAlways, waits until they are synced.
func (c *Consumer) update(fn func(*ConsumerState) error) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	if err := fn(&c.state); err != nil {
		c.mu.Unlock()
		return err
	}
	if len(c.state.ops) == 0 {
		c.mu.Unlock()
		return nil
	}
	c.buf = c.buf[:0]
	var payload [2 * binary.MaxVarintLen64]byte
	for _, op := range c.state.ops {
		p := binary.AppendUvarint(payload[:0], op.consumer)
		p = binary.AppendUvarint(p, op.deliveries)
		c.buf = appendRecord(c.buf, op.kind, op.stream, op.deadline, "", nil, p)
	}
	c.state.ops = c.state.ops[:0]
	if _, err := c.journal.WriteAt(c.buf, c.size); err != nil {
		// The change is applied in memory but not journaled: fence the
		// consumer rather than let memory and disk disagree silently.
		c.err = fmt.Errorf("%w: consumer journal write: %w", ErrWriteFenced, err)
		c.mu.Unlock()
		return c.err
	}
	c.size += int64(len(c.buf))
	c.written++
	mine := c.written
	needSync := c.durability == DurabilityAlways ||
		c.durability == DurabilityInterval && time.Since(c.lastSync) >= c.interval
	if c.size >= c.compactAt {
		err := c.compactLocked()
		c.mu.Unlock()
		return err
	}
	f := c.journal
	c.mu.Unlock()
	if !needSync {
		return nil
	}
	return c.syncTo(f, mine)
}

// syncTo makes sure writes up to count mine are synced; one caller's fsync
// covers every write made before it started.
func (c *Consumer) syncTo(f File, mine uint64) error {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	if c.synced >= mine {
		return nil
	}
	c.mu.Lock()
	target, cur := c.written, c.journal
	c.mu.Unlock()
	if cur != f {
		return nil // compacted meanwhile: the snapshot is synced
	}
	if err := f.Sync(); err != nil {
		c.mu.Lock()
		c.err = fmt.Errorf("%w: consumer journal fsync: %w", ErrWriteFenced, err)
		err = c.err
		c.mu.Unlock()
		return err
	}
	c.synced = target
	c.mu.Lock()
	c.lastSync = time.Now()
	c.mu.Unlock()
	return nil
}

// Close syncs the journal and closes it. Log.Close closes the consumers
// still open.
func (c *Consumer) Close() error {
	err := c.close()
	if err == nil && c.onClose != nil {
		c.onClose()
	}
	return err
}

func (c *Consumer) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.closed = true
	var err error
	if c.err == nil {
		err = c.journal.Sync()
	}
	if cerr := c.journal.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncIfDirty syncs journal writes not yet synced (interval mode).
func (c *Consumer) syncIfDirty() error {
	c.mu.Lock()
	if c.closed || c.err != nil {
		c.mu.Unlock()
		return nil
	}
	f, written := c.journal, c.written
	c.mu.Unlock()
	return c.syncTo(f, written)
}
