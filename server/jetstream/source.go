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
	if len(filters) == 0 {
		return s.log.Next(seq, ">")
	}
	var best jetlog.Msg
	found := false
	for _, f := range filters {
		m, err := s.log.Next(seq, f)
		if err == nil && (!found || m.Seq < best.Seq) {
			best, found = m, true
		}
	}
	if !found {
		return jetlog.Msg{}, jetlog.ErrNotFound
	}
	return best, nil
}

// countPending counts stored messages at or after from that match the
// filters (none: all): a consumer's lag. Filters of one consumer never
// overlap, so the per-filter counts add up.
func countPending(l *jetlog.Log, from uint64, filters []string) uint64 {
	if len(filters) == 0 {
		return l.NumPending(from, "")
	}
	var n uint64
	for _, f := range filters {
		n += l.NumPending(from, f)
	}
	return n
}
