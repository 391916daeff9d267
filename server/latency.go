package server

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// Service latency tracking, as nats-server's exports' latency key: a
// request that crosses a service import of an export with Latency is
// sampled, and once its response comes back (or it could not be
// answered) the server publishes a service_latency metric, in the
// exporting account, on Latency.Subject. Only the sampled requests pay
// anything: a clock reading and the metric.

// Latency is a service export's latency tracking. Sampling is the
// percentage of requests sampled (1..100), or 0 for "headers": only the
// requests whose trace headers ask for sampling (Uber-Trace-Id, B3,
// X-B3-Sampled or X-B3-TraceId, Traceparent), which a percentage below
// 100 also samples when its roll misses. Subject is where the metrics
// go, in the exporting account.
type Latency struct {
	Sampling int
	Subject  string
}

// serviceLatencyType is the metric's type, the reference's.
const serviceLatencyType = "io.nats.server.metric.v1.service_latency"

// serviceLatency is the metric, with the reference's fields. Durations
// are in nanoseconds, as the reference writes them.
type serviceLatency struct {
	typedEvent
	Status         int              `json:"status"`
	Error          string           `json:"description,omitempty"`
	Requestor      *clientEventInfo `json:"requestor,omitempty"`
	Responder      *clientEventInfo `json:"responder,omitempty"`
	RequestHeader  http.Header      `json:"header,omitempty"`
	RequestStart   time.Time        `json:"start"`
	ServiceLatency time.Duration    `json:"service"`
	SystemLatency  time.Duration    `json:"system"`
	TotalLatency   time.Duration    `json:"total"`
}

// The reference's errors for a latency key it refuses.
const (
	errBadSampling    = "bad sampling percentage, should be 1-100"
	errBadServiceType = "bad service response type"
)

// validateLatency checks a service export's latency as the reference
// does when it turns tracking on: a sampling of 1..100 or 0 (headers),
// a publish subject that is not one of the account's service exports,
// and a singleton export.
func validateLatency(a Account, e ServiceExport) error {
	l := e.Latency
	if l == nil {
		return nil
	}
	refuse := func(reason string) error {
		return fmt.Errorf("Error adding service latency sampling for %q on subject %q: %s", e.Subject, l.Subject, reason)
	}
	switch {
	case l.Sampling < 0 || l.Sampling > 100:
		return refuse(errBadSampling)
	case !subjects.ValidLiteral(l.Subject):
		return refuse("not a valid publish subject")
	case e.ResponseType != "" && e.ResponseType != "singleton":
		return refuse(errBadServiceType)
	}
	for _, other := range a.Exports.Services {
		if subjects.Within(l.Subject, other.Subject) {
			// The metric would be a request to the service itself.
			return refuse("the subject is a service export of the account")
		}
	}
	return nil
}

// sampled reports whether a request with the header block msg[:hdr]
// (hdr < 0: none) is to be tracked, and which of its headers asked for
// it (nil when the percentage chose it), the reference's rules.
func (l *Latency) sampled(hdr int, msg []byte) (bool, http.Header) {
	if l.Sampling >= 100 || l.Sampling > 0 && rand.IntN(100) <= l.Sampling {
		return true, nil
	}
	if hdr < 0 {
		return false, nil
	}
	return traceSampled(parseHeaders(msg[:hdr]))
}

// parseHeaders reads a NATS header block with canonical names, as the
// reference hands it to the sampling rules; nil for none.
func parseHeaders(block []byte) http.Header {
	lines := strings.Split(string(block), "\r\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "NATS/1.0") {
		return nil
	}
	h := http.Header{}
	for _, line := range lines[1:] {
		name, val, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))
		h[key] = append(h[key], strings.TrimSpace(val))
	}
	return h
}

// Trace header names (canonical) that decide header sampling.
const (
	hdrUberTraceID  = "Uber-Trace-Id"
	hdrUberCtx      = "Uberctx-"
	hdrTraceparent  = "Traceparent"
	hdrTracestate   = "Tracestate"
	hdrB3           = "B3"
	hdrB3Sampled    = "X-B3-Sampled"
	hdrB3TraceID    = "X-B3-Traceid"
	hdrB3ParentSpan = "X-B3-Parentspanid"
	hdrB3Span       = "X-B3-Spanid"
)

// traceSampled applies the reference's header rules: Jaeger's
// Uber-Trace-Id flags, Zipkin's X-B3-Sampled, X-B3-TraceId and B3, and
// W3C's traceparent flags; it returns the headers that decided.
func traceSampled(h http.Header) (bool, http.Header) {
	if len(h) == 0 {
		return false, nil
	}
	pick := func(keys ...string) http.Header {
		out := http.Header{}
		for _, k := range keys {
			if v, ok := h[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	if id := h[hdrUberTraceID]; len(id) > 0 {
		// trace:span:parent:flags, the flags' low bit meaning sampled.
		tk := strings.Split(id[0], ":")
		if len(tk) != 4 || len(tk[3]) == 0 || len(tk[3]) > 2 {
			return false, nil
		}
		flags, err := hex.DecodeString(strings.Repeat("0", 2-len(tk[3])) + tk[3])
		if err != nil || flags[0]&1 == 0 {
			return false, nil
		}
		out := pick(hdrUberTraceID)
		for k, v := range h {
			if strings.HasPrefix(k, hdrUberCtx) {
				out[k] = v
			}
		}
		return true, out
	}
	if s := h[hdrB3Sampled]; len(s) > 0 && (s[0] == "1" || s[0] == "0") {
		if s[0] == "0" {
			return false, nil
		}
		return true, pick(hdrB3Sampled, hdrB3TraceID, hdrB3ParentSpan, hdrB3Span)
	}
	if _, ok := h[hdrB3TraceID]; ok {
		return true, pick(hdrB3Sampled, hdrB3TraceID, hdrB3ParentSpan, hdrB3Span)
	}
	if b3 := h[hdrB3]; len(b3) > 0 {
		tk := strings.Split(b3[0], "-")
		if len(tk) > 2 && tk[2] == "0" || len(tk) == 1 && tk[0] == "0" {
			return false, nil
		}
		return true, pick(hdrB3)
	}
	if tp := h[hdrTraceparent]; len(tp) > 0 {
		// version-trace-parent-flags, the flags' low bit meaning sampled.
		tk := strings.Split(tp[0], "-")
		if len(tk) != 4 || len(tk[3]) != 2 {
			return false, nil
		}
		flags, err := strconv.ParseInt(tk[3], 16, 16)
		if err != nil || flags&1 == 0 {
			return false, nil
		}
		return true, pick(hdrTraceparent, hdrTracestate)
	}
	return false, nil
}

// latencySample is one tracked request on its way: when the server took
// it, who sent it and the headers that had it sampled.
type latencySample struct {
	start     time.Time
	requestor *clientEventInfo
	header    http.Header
}

// newLatencySample starts tracking a request from c (nil: one forwarded
// along a chain of imports, whose requestor is not known here).
func newLatencySample(c *conn, header http.Header) *latencySample {
	return &latencySample{start: time.Now(), requestor: requestorInfo(c), header: header}
}

// requestorInfo is what the reference tells the exporter of a requestor
// in another account: its account and round trip time only.
func requestorInfo(c *conn) *clientEventInfo {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return &clientEventInfo{Account: eventAccount(c.accountName()), RTT: c.rtt}
}

// responderInfo describes the responder in full, as the reference does.
func responderInfo(c *conn) *clientEventInfo {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	d, account, rtt := c.desc, eventAccount(c.accountName()), c.rtt
	c.mu.Unlock()
	ci := c.connInfo(time.Now(), rtt, d, 0)
	info := clientEvent(&ci, account, d.user)
	info.RTT, info.Server = rtt, c.srv.name
	return &info
}

// answered reports the latency of a request responder answered, as the
// reference measures it: the service's time is the request's time at
// the server less the responder's round trip, the total adds the
// requestor's.
func (ls *latencySample) answered(responder *conn) *serviceLatency {
	now := time.Now()
	m := &serviceLatency{Status: 200, Requestor: ls.requestor, Responder: responderInfo(responder), RequestHeader: ls.header}
	var reqRTT, respRTT time.Duration
	if m.Requestor != nil {
		reqRTT = m.Requestor.RTT
	}
	if m.Responder != nil {
		respRTT = m.Responder.RTT
	}
	elapsed := now.Sub(ls.start)
	m.RequestStart = ls.start.Add(-reqRTT).UTC()
	m.ServiceLatency = max(elapsed-respRTT, 0)
	m.TotalLatency = reqRTT + elapsed
	if respRTT > 0 {
		m.SystemLatency = time.Since(now)
		m.TotalLatency += m.SystemLatency
	}
	return m
}

// failed is the metric of a request that got no answer: 503 when nobody
// took it, 504 when the export's response threshold passed first.
func (ls *latencySample) failed(status int) *serviceLatency {
	m := &serviceLatency{Status: status, Requestor: ls.requestor, RequestHeader: ls.header}
	text := map[int]string{400: "Bad Request", 503: "Service Unavailable", 504: "Service Timeout"}
	m.Error = text[status]
	var reqRTT time.Duration
	if m.Requestor != nil {
		reqRTT = m.Requestor.RTT
	}
	m.RequestStart = ls.start.Add(-reqRTT).UTC()
	return m
}

// publishLatency sends m on subject in the exporting account, as the
// server.
func (s *Server) publishLatency(exporter *account, subject string, m *serviceLatency) {
	m.typedEvent = typedEvent{Type: serviceLatencyType, ID: eventID(), Time: time.Now().UTC()}
	data, err := json.Marshal(m)
	if err != nil {
		s.log.Error("service latency metric not encoded", "err", err)
		return
	}
	to := []byte(subject)
	s.routeIn(exporter.trie, nil, to, to, nil, -1, data)
}
