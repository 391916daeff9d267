package jetlog

import (
	"errors"
	"fmt"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// Sentinel errors. Compare with errors.Is; most are wrapped with the
// operation and the offending input.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("jetlog: log closed")
	// ErrNotFound is returned, wrapped with the operation and its input,
	// wherever the thing asked for is absent: a seq or subject with no
	// live message (Get, Next, LastBySubject, Delete), a
	// stream without its config (LoadConfig), a consumer that is not
	// stored (LoadConsumerConfig, DeleteConsumer). Methods that answer
	// with a count or a seq (NumPending, LastSeqBySubject, ...) return 0
	// instead, as their docs say.
	ErrNotFound = errors.New("jetlog: not found")
	// ErrTooManySubjects is returned by LastSeqs when more subjects match
	// than its caller allows.
	ErrTooManySubjects = errors.New("jetlog: too many matching subjects")
	// ErrMaxMsgs is returned by Append when the stream holds MaxMsgs messages
	// and its discard policy is DiscardNew.
	ErrMaxMsgs = errors.New("jetlog: maximum messages exceeded")
	// ErrMaxBytes is returned by Append when the stream would exceed MaxBytes
	// and its discard policy is DiscardNew.
	ErrMaxBytes = errors.New("jetlog: maximum bytes exceeded")
	// ErrMaxMsgsPerSubject is returned by Append when a subject holds
	// MaxMsgsPerSubject messages and its discard policy is DiscardNew.
	ErrMaxMsgsPerSubject = errors.New("jetlog: maximum messages per subject exceeded")
	// ErrMsgTooLarge is returned by Append when a message (header plus
	// payload) is larger than MaxMsgSize, or larger than a record can hold.
	ErrMsgTooLarge = errors.New("jetlog: message too large")
	// ErrBadSubject is returned by Append for a subject that is not a valid
	// literal subject.
	ErrBadSubject = errors.New("jetlog: invalid subject")
	// ErrBadConfig is returned by Open and UpdateConfig for an invalid config.
	ErrBadConfig = errors.New("jetlog: invalid config")
	// ErrWriteFenced wraps the first fsync failure of a stream (of a file
	// or a directory), or a failed write that could not be cut off again
	// (the truncate failed too, as on a read-only file system). After it,
	// the stream accepts no writes until it is reopened: the kernel may
	// have dropped the dirty pages, so a retried fsync proves nothing, and
	// the segment's tail is unknown.
	ErrWriteFenced = errors.New("jetlog: stream stopped accepting writes after a failed fsync or truncate")
	// ErrJournalBehind wraps a consumer journal write that failed (such
	// as ENOSPC) after the change was applied: the consumer's state has
	// the change, queued, and its journal catches up on the next
	// successful write; until then the change would not survive a
	// restart.
	ErrJournalBehind = errors.New("jetlog: consumer change kept, its journal write failed")
	// ErrMaxAckPending is returned by Consumer.Deliver for a first delivery
	// while MaxAckPending messages are pending.
	ErrMaxAckPending = errors.New("jetlog: maximum ack pending reached")
	// ErrBadConsumerName is returned for an empty consumer name or one that
	// is not a single path element.
	ErrBadConsumerName = errors.New("jetlog: invalid consumer name")
	// ErrLocked is returned by Open when another Log, in this process or
	// another, has the stream directory open. It is vfs.ErrLocked.
	ErrLocked = vfs.ErrLocked
	// ErrCorrupt is matched (via errors.Is) by every *CorruptError.
	ErrCorrupt = errors.New("jetlog: corrupt data")
)

// CorruptError reports a damaged record or file: where it happened and why.
// It matches ErrCorrupt with errors.Is.
type CorruptError struct {
	Segment string `json:"file"`   // file name inside the stream directory
	Offset  int64  `json:"offset"` // byte offset of the damaged record
	Reason  string `json:"reason"` // "crc mismatch", "length beyond segment", ...
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("jetlog: corrupt %s at offset %d: %s", e.Segment, e.Offset, e.Reason)
}

// Is lets errors.Is(err, ErrCorrupt) match.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
