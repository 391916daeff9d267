package server

import (
	"context"
	"errors"
	"slices"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/server/monitor"
)

// monitorSource is the server's side of the seam to the monitoring front
// end: the monitor.Source interface over the document builders, the
// counters, JetStream's snapshot, the login and local requests. It holds
// nothing but the server; the monitor reads nothing else of it.
type monitorSource struct{ s *Server }

var _ monitor.Source = monitorSource{}

func (m monitorSource) Varz() Varz                                   { return m.s.Varz() }
func (m monitorSource) Connz(o ConnzOptions) (*Connz, error)         { return m.s.Connz(o) }
func (m monitorSource) Subsz(o SubszOptions) (*Subsz, error)         { return m.s.Subsz(o) }
func (m monitorSource) Healthz(o HealthzOptions) (HealthStatus, int) { return m.s.Healthz(o) }
func (m monitorSource) Leafz(subs bool) Leafz                        { return m.s.Leafz(subs) }
func (m monitorSource) Accountz(acc string) (*Accountz, error)       { return m.s.Accountz(acc) }
func (m monitorSource) AccountStatz(unused bool) *AccountStatz       { return m.s.AccountStatz(unused) }
func (m monitorSource) Routez() Routez                               { return m.s.Routez() }
func (m monitorSource) Gatewayz() Gatewayz                           { return m.s.Gatewayz() }
func (m monitorSource) AuthRequired() bool                           { return m.s.auth().required }
func (m monitorSource) ServerRights() monitor.Rights                 { return fullRights }

// Jsz builds /jsz. The conversion pins monitor.JszOptions to
// jetstream.JszOptions: the build breaks when their fields differ.
func (m monitorSource) Jsz(o monitor.JszOptions) any { return m.s.Jsz(JszOptions(o)) }

// Counters reads the server's totals.
func (m monitorSource) Counters() monitor.Counters {
	s := m.s
	t := s.traffic()
	c := monitor.Counters{
		ServerID: s.id, ServerName: s.name, Version: Version, Start: s.started,
		Connections: t.conns, WebSocketConnections: t.wsConns, MQTTConnections: t.mqttConns,
		TotalConnections: s.totalConns.Load(), Subscriptions: s.allClientSubs(),
		InMsgs: t.inMsgs, InBytes: t.inBytes, OutMsgs: t.outMsgs, OutBytes: t.outBytes,
		SlowConsumers: s.slowConsumers.Load(), AuthFailures: s.authFailures.Load(),
	}
	for _, l := range s.leafLinks {
		c.Leafs = append(c.Leafs, monitor.LeafLink{Remote: l.name, Up: l.current() != nil})
	}
	return c
}

// Authenticate is the HTTP Basic login (dashboardlogin.go): the
// password is compared here, never handed to the monitor.
func (m monitorSource) Authenticate(user, pass string) (monitor.Rights, bool) {
	id, ok := m.s.auth().httpLogin(user, pass)
	if !ok {
		return nil, false // not a typed nil in the interface
	}
	return id, true
}

// errForeignRights is a Request whose rights the server did not hand
// out: the monitor must pass back what Authenticate or ServerRights gave.
var errForeignRights = errors.New("server: request rights were not the server's")

// Request sends an API request as from (localrequest.go).
func (m monitorSource) Request(ctx context.Context, from monitor.Rights, subject string, body []byte) ([]byte, error) {
	rights, ok := from.(Rights)
	if !ok || rights == nil {
		return nil, errForeignRights
	}
	return m.s.localRequest(ctx, rights, subject, body)
}

// JetStream converts JetStream's snapshot to the monitor's types, which
// name no jetlog type: a copy of a few words per stream and consumer.
// The global account's streams are Streams; every account's JetStream
// adds its usage to Accounts and its counters to the totals.
func (m monitorSource) JetStream() *monitor.JetStreamMetrics {
	s := m.s
	all := s.accountJetStreams()
	if len(all) == 0 {
		return nil
	}
	out := &monitor.JetStreamMetrics{}
	sharedCounted := false
	for i, a := range all {
		jm := a.js.Metrics()
		if i == 0 {
			out.Now, out.StoreDir = jm.Now, jm.StoreDir
		}
		out.APITotal += jm.APITotal
		out.APIErrors += jm.APIErrors
		out.DeadLettered += jm.DeadLettered
		out.DeadLettersLost += jm.DeadLettersLost
		out.Damaged += jm.Damaged
		if !jm.SharedCaches || !sharedCounted { // every account shares the server's caches
			sharedCounted = sharedCounted || jm.SharedCaches
			out.IndexBytes += jm.Index.Bytes
			out.IndexMaxBytes += jm.Index.MaxBytes
			out.IndexLoads += jm.Index.Loads
			out.IndexEvictions += jm.Index.Evicted
			out.OpenFiles += jm.Files.Open
			out.MaxOpenFiles += jm.Files.MaxOpen
		}
		addHistogram(&out.SyncLatency, jm.SyncLatency)
		addHistogram(&out.CommitSizes, jm.CommitSizes)
		acc := monitor.AccountJetStreamMetrics{Name: a.name}
		acc.ReservedMemory, acc.ReservedStorage = a.js.Reserved()
		streams := make([]monitor.StreamMetrics, len(jm.Streams))
		for j := range jm.Streams {
			streams[j] = streamMetrics(&jm.Streams[j])
			if streams[j].Memory {
				acc.Memory += streams[j].Bytes
			} else {
				acc.Storage += streams[j].Bytes
			}
		}
		if i == 0 {
			out.Streams = streams
		} else {
			acc.Streams = streams
		}
		out.Accounts = append(out.Accounts, acc)
	}
	out.MaxMemory, out.MaxStorage = s.jetStreamLimits()
	return out
}

// addHistogram adds h to sum: a copy of h when sum is empty, else its
// counts bucket by bucket (every stream's histogram has the same
// bounds; one with others is left out rather than misread).
func addHistogram(sum *monitor.Histogram, h jetlog.HistogramSnapshot) {
	switch {
	case sum.Bounds == nil:
		*sum = monitor.Histogram{Bounds: h.Bounds, Counts: slices.Clone(h.Counts), Count: h.Count, Sum: h.Sum}
	case len(h.Counts) == len(sum.Counts):
		for i, n := range h.Counts {
			sum.Counts[i] += n
		}
		sum.Count += h.Count
		sum.Sum += h.Sum
	}
}

func streamMetrics(st *jetstream.StreamMetrics) monitor.StreamMetrics {
	out := monitor.StreamMetrics{
		Name: st.Name, Memory: st.Memory,
		Msgs: st.State.Msgs, Bytes: st.State.Bytes, FirstSeq: st.State.FirstSeq, LastSeq: st.State.LastSeq,
		FirstTime: st.State.FirstTime, LastTime: st.State.LastTime, NumSubjects: st.State.NumSubjects,
		MaxMsgs: st.MaxMsgs, MaxBytes: st.MaxBytes, DiskBytes: st.DiskBytes, DeadLetterQueue: st.DeadLetterQueue,
		Accepted: st.Accepted, Duplicates: st.Duplicates, Refused: st.Refused,
		AckLatency: histogram(st.AckLatency),
		Consumers:  make([]monitor.ConsumerMetrics, len(st.Consumers)),
	}
	for i := range st.Consumers {
		c := &st.Consumers[i]
		out.Consumers[i] = monitor.ConsumerMetrics{
			Name: c.Name, NumPending: c.NumPending, NumAckPending: c.NumAckPending,
			NumRedelivered: c.NumRedelivered, NumWaiting: c.NumWaiting,
			Delivered: monitor.SeqPair(c.Delivered), AckFloor: monitor.SeqPair(c.AckFloor),
			DeadLettered: c.DeadLettered, DeadLettersLost: c.DeadLettersLost,
			LastDelivered: c.LastDelivered, LastAcked: c.LastAcked, Oldest: c.Oldest,
		}
	}
	return out
}

func histogram(h jetlog.HistogramSnapshot) monitor.Histogram {
	return monitor.Histogram{Bounds: h.Bounds, Counts: h.Counts, Count: h.Count, Sum: h.Sum}
}
