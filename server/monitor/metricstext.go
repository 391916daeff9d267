package monitor

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// writeMetrics answers a scrape in the Prometheus text format (0.0.4),
// gzipped when the scraper accepts it: the gathered families, then what
// objects writes.
func writeMetrics(w http.ResponseWriter, r *http.Request, families []*dto.MetricFamily, objects func(*exposition)) {
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	var out io.Writer = w
	var gz *gzip.Writer
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		// Best speed: a scrape of 10k consumers is megabytes, and the
		// scrape's time is the budget.
		gz, _ = gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level
		out = gz
	}
	e := &exposition{w: bufio.NewWriterSize(out, 64<<10)}
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(e.w, f); err != nil {
			return // the scraper went away
		}
	}
	objects(e)
	if e.w.Flush() != nil {
		return
	}
	if gz != nil {
		_ = gz.Close() // the scraper went away; nothing to do
	}
}

func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(enc, "gzip") {
			return true
		}
	}
	return false
}

// exposition writes families in the text format. Writes go through a
// bufio.Writer, whose error is sticky: the caller checks once at the
// end.
type exposition struct {
	w    *bufio.Writer
	line []byte // the line being built
}

// family writes a family's HELP and TYPE lines.
func (e *exposition) family(name, typ, help string) {
	e.line = append(e.line[:0], "# HELP "...)
	e.line = append(e.line, name...)
	e.line = append(e.line, ' ')
	e.line = append(e.line, help...)
	e.line = append(e.line, "\n# TYPE "...)
	e.line = append(e.line, name...)
	e.line = append(e.line, ' ')
	e.line = append(e.line, typ...)
	e.line = append(e.line, '\n')
	_, _ = e.w.Write(e.line)
}

// sample writes name{labels[,extra]} v; labels is a prebuilt label list
// without braces.
// see BenchmarkMetricsScrape
func (e *exposition) sample(name, labels, extra string, v float64) {
	// Built in the writer's free space when it fits: no copy.
	b := e.w.AvailableBuffer()
	b = append(b, name...)
	b = append(b, '{')
	b = append(b, labels...)
	b = append(b, extra...)
	b = append(b, "} "...)
	b = appendValue(b, v)
	b = append(b, '\n')
	_, _ = e.w.Write(b)
}

// histogram writes the bucket, sum and count lines of one histogram,
// scaling its sum (1e-9: nanoseconds to seconds); les are the bucket
// labels of its bounds (leLabels).
func (e *exposition) histogram(name, labels string, h Histogram, les []string, scale float64) {
	var cum uint64
	for i := range h.Bounds {
		cum += h.Counts[i]
		e.sample(name+"_bucket", labels, les[i], float64(cum))
	}
	count := max(h.Count, cum) // the snapshot is not atomic across buckets
	e.sample(name+"_bucket", labels, `,le="+Inf"`, float64(count))
	e.sample(name+"_sum", labels, "", float64(h.Sum)*scale)
	e.sample(name+"_count", labels, "", float64(count))
}

// leLabels are the ,le="..." label suffixes of bounds times scale.
func leLabels(bounds []uint64, scale float64) []string {
	les := make([]string, len(bounds))
	for i, b := range bounds {
		les[i] = `,le="` + strconv.FormatFloat(float64(b)*scale, 'g', -1, 64) + `"`
	}
	return les
}

// appendValue formats a sample value: integers without an exponent, the
// rest as Go's shortest float.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendLabel appends name="value", escaping the value as the text
// format requires.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, `="`...)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// objectSeries is one per-stream or per-consumer family: its value for
// one object, and whether the object has it.
type objectSeries[T any] struct {
	name, typ, help string
	value           func(o *T, now time.Time) (float64, bool)
}

func always(v float64) (float64, bool) { return v, true }

// streamSeries are the per-stream families besides the ack latency
// histogram. Names shared with prometheus-nats-exporter mean what its
// series mean (docs/metrics.md).
var streamSeries = []objectSeries[StreamMetrics]{
	{"jetstream_stream_total_messages", "gauge", "Messages in the stream.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.Msgs)) }},
	{"jetstream_stream_total_bytes", "gauge", "Bytes of the stream's messages.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.Bytes)) }},
	{"jetstream_stream_first_seq", "gauge", "First sequence in the stream.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) {
			return always(float64(s.FirstSeq))
		}},
	{"jetstream_stream_last_seq", "gauge", "Last sequence in the stream.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.LastSeq)) }},
	{"jetstream_stream_consumer_count", "gauge", "Consumers of the stream.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) {
			return always(float64(len(s.Consumers)))
		}},
	{"jetstream_stream_subject_count", "gauge", "Distinct subjects in the stream.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) {
			return always(float64(s.NumSubjects))
		}},
	{"jetstream_stream_limit_messages", "gauge", "The stream's max_msgs (-1: none).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.MaxMsgs)) }},
	{"jetstream_stream_limit_bytes", "gauge", "The stream's max_bytes (-1: none).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.MaxBytes)) }},
	{"bus_stream_publishes_total", "counter", "Publishes stored (duplicates not counted).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.Accepted)) }},
	{"bus_stream_duplicates_total", "counter", "Publishes acked as duplicates of a msg id in the window.",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.Duplicates)) }},
	{"bus_stream_publish_errors_total", "counter", "Publishes refused (limits, preconditions, store errors).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return always(float64(s.Refused)) }},
	{"bus_stream_disk_bytes", "gauge", "Bytes of the stream's segment files, deleted records included (file streams).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return float64(s.DiskBytes), !s.Memory }},
	{"bus_stream_oldest_message_age_seconds", "gauge", "Age of the stream's first message (0 when empty).",
		func(s *StreamMetrics, now time.Time) (float64, bool) {
			return always(age(now, s.FirstTime, s.Msgs > 0))
		}},
	{"bus_stream_dead_letter_queue", "gauge", "1 for a stream that captures some consumer's dead-letter subject (absent otherwise).",
		func(s *StreamMetrics, _ time.Time) (float64, bool) { return 1, s.DeadLetterQueue }},
}

// consumerSeries are the per-consumer families.
var consumerSeries = []objectSeries[ConsumerMetrics]{
	{"jetstream_consumer_num_pending", "gauge", "Messages the consumer has yet to deliver: its lag.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) { return always(float64(c.NumPending)) }},
	{"jetstream_consumer_num_ack_pending", "gauge", "Messages delivered and not yet acked.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.NumAckPending))
		}},
	{"jetstream_consumer_num_redelivered", "gauge", "Messages pending that were delivered more than once.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.NumRedelivered))
		}},
	{"jetstream_consumer_num_waiting", "gauge", "Pull requests waiting.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) { return always(float64(c.NumWaiting)) }},
	{"jetstream_consumer_delivered_consumer_seq", "gauge", "Last consumer sequence delivered.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.Delivered.Consumer))
		}},
	{"jetstream_consumer_delivered_stream_seq", "gauge", "Stream sequence of the last delivery.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.Delivered.Stream))
		}},
	{"jetstream_consumer_ack_floor_consumer_seq", "gauge", "Consumer sequence at or below which everything is acked.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.AckFloor.Consumer))
		}},
	{"jetstream_consumer_ack_floor_stream_seq", "gauge", "Stream sequence at or below which everything is acked.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.AckFloor.Stream))
		}},
	{"jetstream_consumer_last_delivery_seconds", "gauge", "Seconds since the last delivery (absent before the first).",
		func(c *ConsumerMetrics, now time.Time) (float64, bool) {
			return age(now, c.LastDelivered, true), !c.LastDelivered.IsZero()
		}},
	{"jetstream_consumer_last_ack_seconds", "gauge", "Seconds since the last ack (absent before the first).",
		func(c *ConsumerMetrics, now time.Time) (float64, bool) {
			return age(now, c.LastAcked, true), !c.LastAcked.IsZero()
		}},
	{"bus_consumer_lag_seconds", "gauge", "Age of the oldest message the consumer has not processed (0 when none).",
		func(c *ConsumerMetrics, now time.Time) (float64, bool) {
			return always(age(now, c.Oldest, !c.Oldest.IsZero()))
		}},
	{"bus_consumer_dead_lettered_total", "counter", "Messages the consumer gave up on: sent to its dead-letter subject, or dropped.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.DeadLettered))
		}},
	{"bus_consumer_dead_letters_lost_total", "counter", "Dead letters of the consumer that no stream stored.",
		func(c *ConsumerMetrics, _ time.Time) (float64, bool) {
			return always(float64(c.DeadLettersLost))
		}},
}

// ackLatencyName is the per-stream publish-to-ack histogram.
const ackLatencyName = "bus_stream_publish_ack_seconds"

// writeObjects writes the per-stream and per-consumer families of m,
// every account's streams: the global account's, then the others'.
// Labels are server_id, account, stream_name and consumer_name: the
// series grow with streams and consumers, never with subjects or
// connections.
func writeObjects(e *exposition, serverID string, m *JetStreamMetrics) {
	streams := accountStreams(m)
	streamLabels := make([]string, len(streams))
	var consumerLabels [][]string
	var b []byte
	for i, as := range streams {
		st := as.stream
		b = appendLabel(b[:0], "server_id", serverID)
		b = append(b, ',')
		b = appendLabel(b, "account", as.account)
		b = append(b, ',')
		b = appendLabel(b, "stream_name", st.Name)
		streamLabels[i] = string(b)
		cl := make([]string, len(st.Consumers))
		for j := range st.Consumers {
			cl[j] = string(appendLabel(append(b, ','), "consumer_name", st.Consumers[j].Name))
		}
		consumerLabels = append(consumerLabels, cl)
	}
	for _, f := range streamSeries {
		e.family(f.name, f.typ, f.help)
		for i, as := range streams {
			if v, ok := f.value(as.stream, m.Now); ok {
				e.sample(f.name, streamLabels[i], "", v)
			}
		}
	}
	e.family(ackLatencyName, "histogram", "From a publish's arrival to its ack (stored, and synced per the durability mode).")
	var les []string
	for i, as := range streams {
		h := as.stream.AckLatency
		if len(les) != len(h.Bounds) { // every stream's has the same bounds
			les = leLabels(h.Bounds, 1e-9)
		}
		e.histogram(ackLatencyName, streamLabels[i], h, les, 1e-9)
	}
	for _, f := range consumerSeries {
		e.family(f.name, f.typ, f.help)
		for i, as := range streams {
			for j := range as.stream.Consumers {
				if v, ok := f.value(&as.stream.Consumers[j], m.Now); ok {
					e.sample(f.name, consumerLabels[i][j], "", v)
				}
			}
		}
	}
}

// accountStream is one stream of a JetStreamMetrics and its account.
type accountStream struct {
	account string
	stream  *StreamMetrics
}

// accountStreams lists m's streams, the global account's first.
func accountStreams(m *JetStreamMetrics) []accountStream {
	out := make([]accountStream, 0, len(m.Streams))
	for i := range m.Streams {
		out = append(out, accountStream{globalAccount, &m.Streams[i]})
	}
	for _, acc := range m.Accounts {
		for i := range acc.Streams {
			out = append(out, accountStream{acc.Name, &acc.Streams[i]})
		}
	}
	return out
}
