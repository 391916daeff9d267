package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Limits are the server's bounds on what clients set on streams and
// consumers, as nats-server's jetstream { limits {} } block (its
// JSLimitOpts). Zero leaves a bound unset. They apply to every request
// from then on: streams and consumers created before a limit was set
// keep their configs, as in the reference.
type Limits struct {
	// MaxAckPending refuses a consumer asking for more max_ack_pending
	// (10121), and caps the default (1000) of one that asks for none.
	MaxAckPending int
	// MaxRequestBatch refuses a pull consumer asking for a larger
	// max_batch (10125), and is the max_batch of one that asks for none,
	// so its pulls above it get 409 Exceeded MaxRequestBatch.
	MaxRequestBatch int
	// DuplicateWindow refuses a stream asking for a longer
	// duplicate_window (10052), and caps the default (2m).
	DuplicateWindow time.Duration
	// DefaultMaxConsumers bounds the consumers of a stream that sets no
	// max_consumers (10026): 0 means the reference's 1000, -1 none.
	DefaultMaxConsumers int
	// MaxHAAssets bounds replicated assets in a cluster; with no
	// replicas bus only reports it in /jsz.
	MaxHAAssets int

	// accountConsumers is the account's max_consumers (withAccount).
	accountConsumers int
	// memoryStreamBytes, storeStreamBytes and streamBytesRequired are
	// the account's bounds on one stream's max_bytes (withAccount).
	memoryStreamBytes, storeStreamBytes int64
	streamBytesRequired                 bool
}

// AccountLimits are an account's own JetStream limits, as nats-server's
// accounts { A { jetstream { max_streams, max_consumers, max_ack_pending
// } } }; 0 leaves one unset. (Its max_memory and max_store are the
// service's MaxMemory and MaxStorage.)
type AccountLimits struct {
	// MaxStreams refuses a stream more (10027).
	MaxStreams int
	// MaxConsumers bounds the consumers of each stream, as the
	// reference applies it: a stream's own max_consumers holds when
	// lower; a stream asking for more is refused (10026).
	MaxConsumers int
	// MaxAckPending refuses a consumer asking for more, as the server's
	// limit does (10121); the lower of the two holds.
	MaxAckPending int
	// MemoryMaxStreamBytes and StoreMaxStreamBytes refuse a memory or
	// file stream whose max_bytes is larger (10122); MaxBytesRequired
	// refuses one without max_bytes (10113), at create and update.
	MemoryMaxStreamBytes, StoreMaxStreamBytes int64
	MaxBytesRequired                          bool
}

// withAccount is l with an account's limits folded in.
func (l Limits) withAccount(a AccountLimits) Limits {
	l.accountConsumers = a.MaxConsumers
	l.memoryStreamBytes, l.storeStreamBytes, l.streamBytesRequired = a.MemoryMaxStreamBytes, a.StoreMaxStreamBytes, a.MaxBytesRequired
	if a.MaxAckPending > 0 && (l.MaxAckPending <= 0 || a.MaxAckPending < l.MaxAckPending) {
		l.MaxAckPending = a.MaxAckPending
	}
	return l
}

func errMaxStreams() *apiError { return newAPIError(400, 10027, "maximum number of streams reached") }

// defaultMaxConsumers is the reference's default_max_consumers.
const defaultMaxConsumers = 1000

// maxConsumers is how many consumers a stream with scfg may have; 0 for
// any number. A stream's own max_consumers, or the account's when that
// is lower, wins over the server's default, as in the reference.
func (l Limits) maxConsumers(scfg streamConfig) int64 {
	n := scfg.MaxConsumers
	if n <= 0 || l.accountConsumers > 0 && int64(l.accountConsumers) < n {
		n = int64(l.accountConsumers)
	}
	switch {
	case n > 0:
		return n
	case l.DefaultMaxConsumers == 0:
		return defaultMaxConsumers
	case l.DefaultMaxConsumers > 0:
		return int64(l.DefaultMaxConsumers)
	}
	return 0
}

// consumerDefaults fills in, before normalize, the defaults the limits
// change: a max_ack_pending below the usual 1000 and a pull consumer's
// max_batch. normalize reads negatives as unset, so they get them too.
func (l Limits) consumerDefaults(c *consumerConfig) {
	if c.MaxAckPending == 0 && c.AckPolicy != AckNone && l.MaxAckPending > 0 && l.MaxAckPending < defaultMaxAckPending {
		c.MaxAckPending = l.MaxAckPending
	}
	if c.DeliverSubject == "" && c.MaxRequestBatch <= 0 && l.MaxRequestBatch > 0 {
		c.MaxRequestBatch = l.MaxRequestBatch
	}
}

// checkConsumer refuses a normalized consumer config beyond the limits,
// with the reference's errors (max_ack_pending -1, no bound, passes).
func (l Limits) checkConsumer(c *consumerConfig) *apiError {
	if c.DeliverSubject == "" && l.MaxRequestBatch > 0 && c.MaxRequestBatch > l.MaxRequestBatch {
		return newAPIError(400, 10125, "consumer max request batch exceeds server limit of %d", l.MaxRequestBatch)
	}
	if l.MaxAckPending > 0 && c.MaxAckPending > l.MaxAckPending {
		return newAPIError(400, 10121, "consumer max ack pending exceeds system limit of %d", l.MaxAckPending)
	}
	return nil
}

// streamDefaults caps, before normalize, the default duplicate window of
// a stream that sets none (mirrors and sourcing streams have none), and
// the reference's max_age cap on it.
func (l Limits) streamDefaults(c *streamConfig) {
	if c.DuplicateWindow != 0 || c.Mirror != nil || len(c.Sources) > 0 || l.DuplicateWindow <= 0 {
		return
	}
	window := min(int64(jetlog.DefaultDuplicateWindow), int64(l.DuplicateWindow))
	if c.MaxAge > 0 && c.MaxAge < window {
		window = c.MaxAge
	}
	c.DuplicateWindow = window
}

// checkStream refuses a normalized stream config whose duplicate window
// is beyond the limit, or that asks for more consumers than its
// account allows.
func (l Limits) checkStream(c *streamConfig) *apiError {
	bound := l.storeStreamBytes
	if c.Storage == jetlog.StorageMemory {
		bound = l.memoryStreamBytes
	}
	switch {
	case l.streamBytesRequired && c.MaxBytes <= 0:
		return newAPIError(400, 10113, "account requires a stream config to have max bytes set")
	case bound > 0 && c.MaxBytes > bound:
		return newAPIError(400, 10122, "stream max bytes exceeds account limit max stream bytes")
	}
	if l.accountConsumers > 0 && c.MaxConsumers > int64(l.accountConsumers) {
		return errMaxConsumers()
	}
	if l.DuplicateWindow > 0 && c.DuplicateWindow > int64(l.DuplicateWindow) {
		return errStreamConfig("duplicates window can not be larger then server limit of %v", l.DuplicateWindow)
	}
	return nil
}

// JSLimits is /jsz's and /varz's "limits": the limits as configured,
// unset ones left out, as the reference writes its JSLimitOpts (where
// default_max_consumers is always there, 1000 unless set).
type JSLimits struct {
	MaxRequestBatch      int   `json:"max_request_batch,omitempty"`
	MaxAckPending        int   `json:"max_ack_pending,omitempty"`
	MaxHAAssets          int   `json:"max_ha_assets,omitempty"`
	Duplicates           int64 `json:"max_duplicate_window,omitempty"` // ns
	MaxInflightPerStream int   `json:"max_batch_inflight_per_stream,omitempty"`
	MaxInflightTotal     int   `json:"max_batch_inflight_total,omitempty"`
	MaxBatchSize         int   `json:"max_batch_size,omitempty"`
	MaxBatchTimeout      int64 `json:"max_batch_timeout,omitempty"` // ns
	DefaultMaxConsumers  int   `json:"default_max_consumers,omitempty"`
}

// jszLimits reports the limits and the batch limits as configured.
func (svc *Service) jszLimits() *JSLimits {
	l, b := svc.sh.bound().limits, svc.batchConfigured
	out := &JSLimits{
		MaxRequestBatch:      l.MaxRequestBatch,
		MaxAckPending:        l.MaxAckPending,
		MaxHAAssets:          l.MaxHAAssets,
		Duplicates:           int64(l.DuplicateWindow),
		MaxInflightPerStream: b.MaxInflightPerStream,
		MaxInflightTotal:     b.MaxInflightTotal,
		MaxBatchSize:         b.MaxSize,
		MaxBatchTimeout:      int64(b.Timeout),
		DefaultMaxConsumers:  l.DefaultMaxConsumers,
	}
	if out.DefaultMaxConsumers == 0 {
		out.DefaultMaxConsumers = defaultMaxConsumers
	}
	return out
}

// report puts the limits that are set into an account info's.
func (a AccountLimits) report(out *accountLimits) {
	for _, f := range []struct {
		set int
		to  *int
	}{{a.MaxStreams, &out.MaxStreams}, {a.MaxConsumers, &out.MaxConsumers}, {a.MaxAckPending, &out.MaxAckPend}} {
		if f.set > 0 {
			*f.to = f.set
		}
	}
	if a.MemoryMaxStreamBytes > 0 {
		out.MemoryMaxStreamBytes = a.MemoryMaxStreamBytes
	}
	if a.StoreMaxStreamBytes > 0 {
		out.StoreMaxStreamBytes = a.StoreMaxStreamBytes
	}
	out.MaxBytesRequired = a.MaxBytesRequired
}
