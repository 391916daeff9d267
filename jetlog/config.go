package jetlog

import (
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Retention says when messages may be removed besides the limits.
type Retention string

// Retention policies, as named in the JetStream API.
const (
	// RetentionLimits keeps messages until a limit removes them.
	RetentionLimits Retention = "limits"
	// RetentionInterest keeps a message until every consumer acked it; the
	// caller tracks interest and calls Delete.
	RetentionInterest Retention = "interest"
	// RetentionWorkQueue removes a message once it is acked; the caller calls
	// Delete on ack.
	RetentionWorkQueue Retention = "workqueue"
)

// Discard says what Append does when a limit is reached.
type Discard string

// Discard policies, as named in the JetStream API.
const (
	DiscardOld Discard = "old" // remove the oldest messages to make room
	DiscardNew Discard = "new" // refuse the new message (ErrMaxMsgs, ...)
)

// Storage selects where messages live.
type Storage string

// Storage kinds, as named in the JetStream API.
const (
	StorageFile   Storage = "file"
	StorageMemory Storage = "memory"
)

// Durability says when appended bytes are fsynced.
type Durability string

// Durability modes. See README.md for what each guarantees.
const (
	// DurabilityAlways returns from Append only after the record is
	// fdatasynced. Concurrent appends share one fsync (group commit).
	DurabilityAlways Durability = "always"
	// DurabilityInterval syncs at most every SyncInterval; a crash may lose
	// the appends acknowledged in the last interval.
	DurabilityInterval Durability = "interval"
	// DurabilityNone never syncs explicitly; the OS decides.
	DurabilityNone Durability = "none"
)

// DefaultDuplicateWindow is the dedup window when the config leaves it zero.
const DefaultDuplicateWindow = 2 * time.Minute

// DefaultSyncInterval is used by DurabilityInterval when SyncInterval is zero.
const DefaultSyncInterval = 100 * time.Millisecond

// DefaultSegmentSize is the size at which a segment file is rolled.
const DefaultSegmentSize = 64 << 20

// StreamConfig is a stream's configuration, stored msgpack-encoded beside the
// log. Limits of zero or less mean unlimited.
type StreamConfig struct {
	Name              string        `msgpack:"name"`
	Subjects          []string      `msgpack:"subjects"`
	Retention         Retention     `msgpack:"retention"`
	MaxConsumers      int64         `msgpack:"max_consumers"`
	MaxMsgs           int64         `msgpack:"max_msgs"`
	MaxBytes          int64         `msgpack:"max_bytes"`
	MaxAge            time.Duration `msgpack:"max_age"`
	MaxMsgsPerSubject int64         `msgpack:"max_msgs_per_subject"`
	MaxMsgSize        int32         `msgpack:"max_msg_size"`
	Discard           Discard       `msgpack:"discard"`
	// DiscardNewPerSubject refuses an append to a subject that holds
	// MaxMsgsPerSubject messages instead of dropping its oldest.
	DiscardNewPerSubject bool          `msgpack:"discard_new_per_subject"`
	Storage              Storage       `msgpack:"storage"`
	DuplicateWindow      time.Duration `msgpack:"duplicate_window"`
	Durability           Durability    `msgpack:"durability"`
	SyncInterval         time.Duration `msgpack:"sync_interval"`
	// Compression s2-encodes message payloads of 64 bytes or more that it
	// makes smaller (compress.go); reads decode them. It may change
	// between opens: each record says whether it is compressed.
	Compression bool `msgpack:"compression,omitempty"`
	// MsgTTL lets a message carry a Nats-TTL header (see ttl.go).
	MsgTTL bool `msgpack:"msg_ttl,omitempty"`
	// SubjectDeleteMarkerTTL, when set, reports the subjects whose last
	// message aged out or expired (Options.OnSubjectExpired).
	SubjectDeleteMarkerTTL time.Duration `msgpack:"subject_delete_marker_ttl,omitempty"`
	// Raw is opaque to jetlog: the caller may keep the API request here
	// (for example to echo fields jetlog does not know).
	Raw []byte `msgpack:"raw,omitempty"`
}

// Normalized returns cfg with defaults filled in. It does not validate.
func (cfg StreamConfig) Normalized() StreamConfig {
	if cfg.Retention == "" {
		cfg.Retention = RetentionLimits
	}
	if cfg.Discard == "" {
		cfg.Discard = DiscardOld
	}
	if cfg.Storage == "" {
		cfg.Storage = StorageFile
	}
	if cfg.Durability == "" {
		cfg.Durability = DurabilityAlways
	}
	if cfg.Durability == DurabilityInterval && cfg.SyncInterval <= 0 {
		cfg.SyncInterval = DefaultSyncInterval
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = DefaultDuplicateWindow
		if cfg.MaxAge > 0 && cfg.MaxAge < cfg.DuplicateWindow {
			cfg.DuplicateWindow = cfg.MaxAge
		}
	}
	for _, p := range []*int64{&cfg.MaxConsumers, &cfg.MaxMsgs, &cfg.MaxBytes, &cfg.MaxMsgsPerSubject} {
		if *p <= 0 {
			*p = -1
		}
	}
	if cfg.MaxMsgSize <= 0 {
		cfg.MaxMsgSize = -1
	}
	return cfg
}

// Validate reports the first invalid field of a normalized config, wrapped
// in ErrBadConfig.
func (cfg StreamConfig) Validate() error {
	bad := func(field string, v any) error {
		return fmt.Errorf("jetlog: config %s %q: %w", field, fmt.Sprint(v), ErrBadConfig)
	}
	switch cfg.Retention {
	case RetentionLimits, RetentionInterest, RetentionWorkQueue:
	default:
		return bad("retention", cfg.Retention)
	}
	switch cfg.Discard {
	case DiscardOld, DiscardNew:
	default:
		return bad("discard", cfg.Discard)
	}
	switch cfg.Storage {
	case StorageFile, StorageMemory:
	default:
		return bad("storage", cfg.Storage)
	}
	switch cfg.Durability {
	case DurabilityAlways, DurabilityInterval, DurabilityNone:
	default:
		return bad("durability", cfg.Durability)
	}
	if cfg.MaxAge < 0 {
		return bad("max_age", cfg.MaxAge)
	}
	if cfg.MaxAge > 0 && cfg.DuplicateWindow > cfg.MaxAge {
		return bad("duplicate_window", cfg.DuplicateWindow)
	}
	return nil
}

// Options are the knobs of Open that are not part of the stream config.
// The zero value is usable.
type Options struct {
	// FS is the file system; nil means the operating system's. Memory
	// streams ignore it.
	FS FS
	// Now is the clock for timestamps, max age and the dedup window; nil
	// means time.Now.
	Now func() time.Time
	// Logger receives recovery reports and background failures; nil
	// discards them.
	Logger *slog.Logger
	// SegmentSize rolls the active segment once it reaches this many bytes;
	// zero means DefaultSegmentSize (a sixteenth of it for memory streams).
	SegmentSize int64
	// ExpireEvery is how often the background expiry looks at the oldest
	// message (MaxAge) and forgets old msg ids (dedup window); zero means
	// a tenth of the shorter of the two, clamped to [10ms, 1s]. Negative
	// disables background expiry (for tests that drive it).
	ExpireEvery time.Duration
	// OnSubjectExpired, with StreamConfig.SubjectDeleteMarkerTTL, gets the
	// subjects whose last message was just removed by age or TTL (and was
	// not a delete marker). It runs on the appender goroutine: it must not
	// block, nor wait for the log.
	OnSubjectExpired func(subjects []string)
	// EvictAfter is how long a sealed segment's section (its per-message
	// state in memory, about 40 bytes a message) may go unused before it
	// is dropped; the next use reloads it from the segment's index. Zero
	// means DefaultEvictAfter; negative keeps every loaded section. It
	// runs with the background expiry (ExpireEvery), and never for
	// memory streams.
	EvictAfter time.Duration
	// CompactBytes is the consumer journal size after which the consumer
	// state is snapshotted and a new journal started; zero means
	// DefaultCompactBytes.
	CompactBytes int64
	// AppendQueue is how many requests (appends, deletes, ...) may wait
	// for the appender before a caller blocks (see AppendAsync); zero
	// means DefaultAppendQueue. Each slot costs a pointer per stream.
	AppendQueue int
	// IndexCache, if set, bounds the memory the sections of sealed
	// segments take across every Log sharing it (see IndexCache); nil
	// gives the Log a bound of its own of DefaultIndexCacheBytes.
	IndexCache *IndexCache
	// FileCache, if set, opens the stream's segment files on demand and
	// bounds how many are open across every Log sharing it (see
	// FileCache); the stream directory is then guarded by the cache
	// instead of a LOCK file of its own. nil keeps every segment open
	// while the Log is, and flocks LOCK. Memory streams ignore it.
	FileCache *FileCache
	// Keys, if set, encrypts a new file stream and opens an encrypted one
	// (seal.go, streamkey.go); nil stores plaintext. Open refuses a
	// stream whose encryption does not match (ErrNoKey, ErrWrongKey,
	// ErrNotEncrypted). Memory streams ignore it.
	Keys *Keyring
}

// DefaultAppendQueue is the default Options.AppendQueue: enough for one
// pipelining publisher to fill a commit while the previous one syncs.
const DefaultAppendQueue = 256

// DefaultEvictAfter is the default Options.EvictAfter.
const DefaultEvictAfter = time.Minute

// DefaultCompactBytes is the default Options.CompactBytes.
const DefaultCompactBytes = 1 << 20

func (o Options) withDefaults(cfg StreamConfig) Options {
	if o.FS == nil || cfg.Storage == StorageMemory {
		if cfg.Storage == StorageMemory {
			o.FS = vfs.NewVolatileMemFS()
		} else {
			o.FS = vfs.OSFS{}
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = DefaultSegmentSize
		if cfg.Storage == StorageMemory {
			// Smaller segments: expired memory is given back sooner and a
			// segment's buffer never grows by a huge copy.
			o.SegmentSize = DefaultSegmentSize / 16
		}
	}
	if o.CompactBytes <= 0 {
		o.CompactBytes = DefaultCompactBytes
	}
	if o.AppendQueue <= 0 {
		o.AppendQueue = DefaultAppendQueue
	}
	if o.EvictAfter == 0 {
		o.EvictAfter = DefaultEvictAfter
	}
	if o.ExpireEvery == 0 {
		horizon := cfg.DuplicateWindow
		if cfg.MaxAge > 0 {
			horizon = min(horizon, cfg.MaxAge)
		}
		o.ExpireEvery = min(max(horizon/10, 10*time.Millisecond), time.Second)
	}
	return o
}

// UpdateConfig changes the stream's limits and modes. The new config is
// stored, the limits applied (discard old) and the removals journaled.
func (l *Log) UpdateConfig(cfg StreamConfig) error {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opConfig
	r.cfg = cfg
	if err := l.send(r); err != nil {
		return err
	}
	return r.err
}

func (l *Log) doUpdateConfig(cfg StreamConfig) error {
	cfg = cfg.Normalized()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Storage != l.cfg.Storage {
		return fmt.Errorf("jetlog: config storage %q: %w", cfg.Storage, ErrBadConfig)
	}
	var created time.Time
	if !l.memory {
		var m streamMeta
		if err := readChecked(l.fs, l.seal, path.Join(l.dir, metaFile), &m); err == nil {
			created = m.Created
		}
		if err := writeChecked(l.fs, l.seal, path.Join(l.dir, metaFile), streamMeta{Version: 1, Config: cfg, Created: created}); err != nil {
			return fmt.Errorf("jetlog: store config: %w", err)
		}
	}
	l.mu.Lock()
	l.cfg = cfg
	l.enforceLimits(nil)
	if cfg.MaxAge > 0 {
		l.expireLocked(l.opts.Now().Add(-cfg.MaxAge).UnixNano())
	}
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	l.ap.dd.window = int64(cfg.DuplicateWindow)
	l.removeSegments(dead)
	return l.flushTomb(true)
}
