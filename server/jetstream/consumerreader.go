package jetstream

import (
	"github.com/bus-dev/bus/jetlog"
)

// consumerReader is what a consumer reads of its stream: the log and, from
// the core, who listens.
type consumerReader struct {
	log  *jetlog.Log
	core Core
}

func (s *consumerReader) Get(seq uint64) (jetlog.Msg, error) { return s.log.Get(seq) }

func (s *consumerReader) LastSeq() uint64 { return s.log.State().LastSeq }

func (s *consumerReader) HasInterest(subject string) bool { return s.core.HasInterest(subject) }

func (s *consumerReader) MayDeliver(inbox, subject string) bool {
	return s.core.MayDeliver(inbox, subject)
}

func (s *consumerReader) FiltersStored(inbox string) bool { return s.core.FiltersStored(inbox) }

// NextBatch returns up to max messages at or after seq matching any
// filter, read at once.
func (s *consumerReader) NextBatch(seq uint64, filters []string, max int) ([]jetlog.Msg, error) {
	return s.log.NextBatch(seq, filters, max)
}

// NumPending counts the stored messages at or after seq matching any of
// filters (none: all): a consumer's lag.
func (s *consumerReader) NumPending(seq uint64, filters []string) uint64 {
	return s.log.NumPending(seq, filters...)
}
