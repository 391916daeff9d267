package jetstream

import (
	"github.com/bus-dev/bus/jetlog"
)

// streamSource is what a consumer reads of its stream: the log and, from
// the core, who listens.
type streamSource struct {
	log  *jetlog.Log
	core Core
}

func (s *streamSource) Get(seq uint64) (jetlog.Msg, error) { return s.log.Get(seq) }

func (s *streamSource) LastSeq() uint64 { return s.log.State().LastSeq }

func (s *streamSource) HasInterest(subject string) bool { return s.core.HasInterest(subject) }

// Next returns the lowest message at or after seq matching any filter.
func (s *streamSource) Next(seq uint64, filters []string) (jetlog.Msg, error) {
	return s.log.NextMatching(seq, filters)
}

// NextBatch returns up to max messages at or after seq matching any
// filter, read at once.
func (s *streamSource) NextBatch(seq uint64, filters []string, max int) ([]jetlog.Msg, error) {
	return s.log.NextBatch(seq, filters, max)
}

// NumPending counts the stored messages at or after seq matching filters.
func (s *streamSource) NumPending(seq uint64, filters []string) uint64 {
	return countPending(s.log, seq, filters)
}

// countPending counts stored messages at or after from that match the
// filters (none: all): a consumer's lag.
func countPending(l *jetlog.Log, from uint64, filters []string) uint64 {
	return l.NumPendingFiltered(from, filters)
}
