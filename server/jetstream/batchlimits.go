package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// BatchLimits bounds atomic batch publishing, as the reference's
// jetstream limits do (max_batch_inflight_per_stream,
// max_batch_inflight_total, max_batch_size, max_batch_timeout), and the
// bytes the open batches stage (bus's own: see MaxStagedBytes). A zero
// field means the default.
type BatchLimits struct {
	MaxInflightPerStream int           // open batches per stream; 50
	MaxInflightTotal     int           // open batches in the server; 1000
	MaxSize              int           // messages per batch; 1000
	Timeout              time.Duration // since a batch's last message; 10s
	// MaxStagedBytes bounds the bytes (subjects, headers, payloads) the
	// open batches of all streams stage together; 256 MiB. A stream's
	// open batches also stage no more than its max_bytes, when it has
	// one. Bus stages in memory, where the reference stages a file
	// stream's batches on disk, so without it the inflight counts alone
	// would let one client pin tens of gigabytes (#22).
	MaxStagedBytes int64
}

// defaultMaxStagedBytes is BatchLimits.MaxStagedBytes's default: a
// quarter of a gigabyte, some hundred times the largest batch of small
// messages (1000 of a few hundred bytes), yet a bound a server survives.
const defaultMaxStagedBytes = 256 << 20

// fastDefaults is b for fast batches: the inflight counts as given, or
// the reference's defaults for fast batches.
func (b BatchLimits) fastDefaults() BatchLimits {
	if b.MaxInflightPerStream <= 0 {
		b.MaxInflightPerStream = defaultFastInflightPerStream
	}
	if b.MaxInflightTotal <= 0 {
		b.MaxInflightTotal = defaultFastInflightTotal
	}
	return b
}

func (b BatchLimits) withDefaults() BatchLimits {
	if b.MaxInflightPerStream <= 0 {
		b.MaxInflightPerStream = 50
	}
	if b.MaxInflightTotal <= 0 {
		b.MaxInflightTotal = 1000
	}
	if b.MaxSize <= 0 {
		b.MaxSize = 1000
	}
	if b.Timeout <= 0 {
		b.Timeout = 10 * time.Second
	}
	if b.MaxStagedBytes <= 0 {
		b.MaxStagedBytes = defaultMaxStagedBytes
	}
	return b
}

// stagedSize is what a message counts against the staging bounds: the
// bytes its staged copy holds.
func stagedSize(m jetlog.Msg) int64 {
	return int64(len(m.Subject) + len(m.Header) + len(m.Data))
}

// reserveStagedLocked counts n more staged bytes for batch b (bs.mu
// held), or refuses them with the advisory reason for abandoning b. A
// stream stages at most its max_bytes (maxBytes, when > 0) and all
// streams together at most MaxStagedBytes; a batch that alone would
// stage more than its stream may is too large, one that would fit alone
// but not beside the other open batches is refused as too many in
// flight (429: it may succeed later).
func (st *stream) reserveStagedLocked(b *stagedBatch, n, maxBytes int64) (*apiError, string) {
	total := st.sh.batchLimits.MaxStagedBytes
	limit := total
	if maxBytes > 0 && maxBytes < limit {
		limit = maxBytes
	}
	bs := &st.batches
	switch {
	case b.bytes+n > limit:
		return errBatchTooLarge(limit), "large"
	case bs.staged+n > limit:
		return errBatchTooManyInflight(), "incomplete"
	case st.sh.stagedBytes.Add(n) > total:
		st.sh.stagedBytes.Add(-n)
		return errBatchTooManyInflight(), "incomplete"
	}
	b.bytes += n
	bs.staged += n
	return nil, ""
}

// releaseStaged gives back n staged bytes of a batch no longer open (a
// committed one, once its commit is done).
func (st *stream) releaseStaged(n int64) {
	st.batches.mu.Lock()
	defer st.batches.mu.Unlock()
	st.releaseStagedLocked(n)
}

func (st *stream) releaseStagedLocked(n int64) {
	st.batches.staged -= n
	st.sh.stagedBytes.Add(-n)
}
