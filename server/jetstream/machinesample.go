package jetstream

import (
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/jetlog"
)

// Ack sampling, as the reference has it: a consumer with sample_freq
// ("50%" or "50": the share of acks, 100 for all) publishes, for that
// share of its explicit acks, a $JS.EVENT.METRIC.CONSUMER.ACK.<stream>.
// <consumer> metric with the time from the message's last delivery to
// its ack. Without it the machine holds no sampler and the hot paths
// test one nil pointer.

const ackMetricPrefix = "$JS.EVENT.METRIC.CONSUMER.ACK"

type consumerAckMetric struct {
	Type        string    `json:"type"`
	ID          string    `json:"id"`
	Time        time.Time `json:"timestamp"`
	Stream      string    `json:"stream"`
	Consumer    string    `json:"consumer"`
	ConsumerSeq uint64    `json:"consumer_seq"`
	StreamSeq   uint64    `json:"stream_seq"`
	Delay       int64     `json:"ack_time"` // ns from the last delivery to the ack
	Deliveries  uint64    `json:"deliveries"`
}

// ackSampler keeps when each pending message was last delivered (the
// ledger's pending entries hold only the redelivery deadline), and the
// acks of the current step to report.
type ackSampler struct {
	freq        int
	deliveredAt map[uint64]int64 // stream seq → unix ns of its last delivery
	acked       []consumerAckMetric
}

// parseSampleFreq reads sample_freq as the reference does: an integer
// share, with or without "%"; "" is none.
func parseSampleFreq(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err == nil && n < 0 {
		err = strconv.ErrRange
	}
	return n, err
}

// newAckSampler returns nil for a consumer that does not sample.
func newAckSampler(freq string) *ackSampler {
	n, _ := parseSampleFreq(freq) // checked at create
	if n <= 0 {
		return nil
	}
	return &ackSampler{freq: min(n, 100), deliveredAt: map[uint64]int64{}}
}

// delivered notes the delivery of msgs at now.
func (s *ackSampler) delivered(msgs []jetlog.Msg, now time.Time) {
	if s == nil {
		return
	}
	for _, msg := range msgs {
		s.deliveredAt[msg.Seq] = now.UnixNano()
	}
}

// ackedLocked notes the explicit ack of seq, still pending in st, at
// now (unix ns); called in the ledger step, before the ack removes it.
func (s *ackSampler) ackedLocked(m *machine, st *jetlog.ConsumerState, seq uint64, now int64) {
	if s == nil {
		return
	}
	at, known := s.deliveredAt[seq]
	delete(s.deliveredAt, seq)
	p := st.Pending[seq]
	if p == nil || !known {
		return
	}
	if s.freq < 100 && m.random()*100 >= float64(s.freq) {
		return
	}
	s.acked = append(s.acked, consumerAckMetric{
		Stream: m.stream, Consumer: m.name, ConsumerSeq: p.Consumer, StreamSeq: seq,
		Delay: now - at, Deliveries: p.Deliveries,
	})
	if len(s.deliveredAt) > 2*len(st.Pending)+1024 {
		// Seqs that left without an ack (terminated, dead-lettered,
		// removed from the stream): forget them.
		for seq := range s.deliveredAt {
			if _, ok := st.Pending[seq]; !ok {
				delete(s.deliveredAt, seq)
			}
		}
	}
}

// report publishes the metrics of the acks of this step.
// (none, when the step's acks could not be recorded: ok false).
func (s *ackSampler) report(m *machine, now time.Time, ok bool) {
	if s == nil {
		return
	}
	for _, e := range s.acked {
		if ok {
			e.Type, e.ID, e.Time = "io.nats.jetstream.metric.v1.consumer_ack", nuid.Next(), now.UTC()
			m.advise(ackMetricPrefix, e)
		}
	}
	s.acked = s.acked[:0]
}
