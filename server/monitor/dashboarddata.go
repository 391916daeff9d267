package monitor

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"runtime"
	"time"
	"unicode/utf8"
)

// What the dashboard shows, as JSON: the state document it polls, and
// the messages of a stream (the dead letters of a dead-letter stream).
// Times are unix milliseconds, 0 for never.
const (
	dashMaxStreams   = 1000    // streams listed in the state; the rest are counted
	dashPreviewBytes = 1024    // of each payload in a message list
	dashFullBytes    = 1 << 20 // of a payload shown whole
	dashPageDefault  = 25      // messages in a list
	dashPageMax      = 100     //
	dashListTimeout  = 10 * time.Second
)

type dashState struct {
	Now            int64          `json:"now"`
	Server         dashServer     `json:"server"`
	JetStream      *dashJetStream `json:"jetstream,omitempty"` // nil when off
	Streams        []dashStream   `json:"streams"`
	StreamsOmitted int            `json:"streams_omitted,omitempty"`
	// Connections are the open ones (dashboardconns.go).
	Connections        []dashConn `json:"connections"`
	ConnectionsOmitted int        `json:"connections_omitted,omitempty"`
	// Selected is the stream the request asked for, with its consumers
	// and their sampled lag.
	Selected *dashSelected `json:"selected,omitempty"`
	// RatesIn and RatesOut are the server's messages per second between
	// samples.
	RatesIn        []lagPoint `json:"rates_in"`
	RatesOut       []lagPoint `json:"rates_out"`
	SampleInterval int64      `json:"sample_interval_ms"`
	Auth           dashAuth   `json:"auth"`
}

type dashServer struct {
	ID                   string `json:"id"`
	Name                 string `json:"name"`
	Version              string `json:"version"`
	Start                int64  `json:"start"`
	Uptime               string `json:"uptime"`
	Connections          int    `json:"connections"`
	MQTTConnections      int    `json:"mqtt_connections"`      // of connections
	WebSocketConnections int    `json:"websocket_connections"` // of connections
	TotalConnections     int64  `json:"total_connections"`
	Subscriptions        int    `json:"subscriptions"`
	InMsgs               int64  `json:"in_msgs"`
	OutMsgs              int64  `json:"out_msgs"`
	InBytes              int64  `json:"in_bytes"`
	OutBytes             int64  `json:"out_bytes"`
	SlowConsumers        int64  `json:"slow_consumers"`
	Mem                  uint64 `json:"mem"`
}

type dashJetStream struct {
	Streams         int    `json:"streams"`
	Consumers       int    `json:"consumers"`
	Messages        uint64 `json:"messages"`
	Bytes           uint64 `json:"bytes"`
	Memory          uint64 `json:"memory"`
	Storage         uint64 `json:"storage"`
	MaxMemory       int64  `json:"max_memory"`
	MaxStorage      int64  `json:"max_storage"`
	APITotal        int64  `json:"api_total"`
	APIErrors       int64  `json:"api_errors"`
	DeadLettered    int64  `json:"dead_lettered"`
	DeadLettersLost int64  `json:"dead_letters_lost"`
	Damaged         int    `json:"damaged"`
}

type dashStream struct {
	Name         string `json:"name"`
	Storage      string `json:"storage"`
	Messages     uint64 `json:"messages"`
	Bytes        uint64 `json:"bytes"`
	FirstSeq     uint64 `json:"first_seq"`
	LastSeq      uint64 `json:"last_seq"`
	FirstTime    int64  `json:"first_ts"`
	LastTime     int64  `json:"last_ts"`
	Consumers    int    `json:"consumers"`
	Lag          uint64 `json:"lag"` // all its consumers' num_pending
	Accepted     uint64 `json:"accepted"`
	Duplicates   uint64 `json:"duplicates"`
	DLQ          bool   `json:"dlq"`
	DeadLettered int64  `json:"dead_lettered"` // by its consumers
}

type dashConsumer struct {
	Name            string `json:"name"`
	NumPending      uint64 `json:"num_pending"`
	NumAckPending   int    `json:"num_ack_pending"`
	NumRedelivered  int    `json:"num_redelivered"`
	NumWaiting      int    `json:"num_waiting"`
	Delivered       uint64 `json:"delivered_seq"`
	AckFloor        uint64 `json:"ack_floor_seq"`
	DeadLettered    int64  `json:"dead_lettered"`
	DeadLettersLost int64  `json:"dead_letters_lost"`
	LastActive      int64  `json:"last_active"`
	Oldest          int64  `json:"oldest_unprocessed"`
}

type dashSelected struct {
	Stream    string                `json:"stream"`
	Consumers []dashConsumer        `json:"consumers"`
	Lag       map[string][]lagPoint `json:"lag"`
	// Untracked counts the server's consumers without lag history
	// (beyond lagMaxConsumers).
	Untracked int `json:"untracked"`
}

// dashAuth tells the page what needs a login: messages and actions
// whenever authorization is configured, the rest with http_auth.
type dashAuth struct {
	ActionsNeedLogin  bool `json:"actions_need_login"`
	MessagesNeedLogin bool `json:"messages_need_login"`
	ReadsNeedLogin    bool `json:"reads_need_login"`
}

func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// serveDashboardState answers the state document; stream selects the
// stream whose consumers and lag to add, since (unix ms) leaves out the
// samples the page already has.
func (m *Server) serveDashboardState(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	stream := q.str("stream")
	since := int64(q.uint64("since"))
	if q.err != nil {
		dashboardError(w, http.StatusBadRequest, q.err.Error())
		return
	}
	dashboardJSON(w, http.StatusOK, m.dashboardState(stream, since))
}

func (m *Server) dashboardState(stream string, since int64) dashState {
	now := time.Now()
	c := m.src.Counters()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	authRequired := m.src.AuthRequired()
	st := dashState{
		Now: now.UnixMilli(),
		Server: dashServer{
			ID: c.ServerID, Name: c.ServerName, Version: c.Version, Start: unixMilli(c.Start), Uptime: Uptime(now.Sub(c.Start)),
			Connections: c.Connections, MQTTConnections: c.MQTTConnections, WebSocketConnections: c.WebSocketConnections, TotalConnections: c.TotalConnections, Subscriptions: c.Subscriptions,
			InMsgs: c.InMsgs, OutMsgs: c.OutMsgs, InBytes: c.InBytes, OutBytes: c.OutBytes,
			SlowConsumers: c.SlowConsumers, Mem: mem.Sys,
		},
		Streams:        []dashStream{},
		SampleInterval: lagInterval.Milliseconds(),
		Auth:           dashAuth{ActionsNeedLogin: authRequired, MessagesNeedLogin: authRequired, ReadsNeedLogin: m.opts.HTTPAuth},
	}
	st.Connections, st.ConnectionsOmitted = m.dashConns()
	st.RatesIn, st.RatesOut = m.lag.rates(since)
	jm := m.src.JetStream()
	if jm == nil {
		return st
	}
	js := &dashJetStream{
		Streams: len(jm.Streams), APITotal: jm.APITotal, APIErrors: jm.APIErrors,
		DeadLettered: jm.DeadLettered, DeadLettersLost: jm.DeadLettersLost, Damaged: jm.Damaged,
		MaxMemory: jm.MaxMemory, MaxStorage: jm.MaxStorage,
	}
	for i := range jm.Streams {
		sm := &jm.Streams[i]
		js.Consumers += len(sm.Consumers)
		js.Messages += sm.Msgs
		js.Bytes += sm.Bytes
		if sm.Memory {
			js.Memory += sm.Bytes
		} else {
			js.Storage += sm.Bytes
		}
		if len(st.Streams) == dashMaxStreams {
			st.StreamsOmitted++
		} else {
			st.Streams = append(st.Streams, m.dashStream(sm))
		}
		if sm.Name == stream {
			st.Selected = dashSelection(sm, m.lag, since)
		}
	}
	st.JetStream = js
	return st
}

func (m *Server) dashStream(sm *StreamMetrics) dashStream {
	d := dashStream{
		Name: sm.Name, Storage: "file", Messages: sm.Msgs, Bytes: sm.Bytes,
		FirstSeq: sm.FirstSeq, LastSeq: sm.LastSeq,
		FirstTime: unixMilli(sm.FirstTime), LastTime: unixMilli(sm.LastTime),
		Consumers: len(sm.Consumers), Accepted: sm.Accepted, Duplicates: sm.Duplicates,
		DLQ: sm.DeadLetterQueue || m.lag.isHeaderDLQ(sm.Name),
	}
	if sm.Memory {
		d.Storage = "memory"
	}
	for _, c := range sm.Consumers {
		d.Lag += c.NumPending
		d.DeadLettered += c.DeadLettered
	}
	return d
}

func dashSelection(sm *StreamMetrics, ring *lagRing, since int64) *dashSelected {
	sel := &dashSelected{Stream: sm.Name, Consumers: []dashConsumer{}}
	for _, c := range sm.Consumers {
		last := c.LastDelivered
		if c.LastAcked.After(last) {
			last = c.LastAcked
		}
		sel.Consumers = append(sel.Consumers, dashConsumer{
			Name: c.Name, NumPending: c.NumPending, NumAckPending: c.NumAckPending,
			NumRedelivered: c.NumRedelivered, NumWaiting: c.NumWaiting,
			Delivered: c.Delivered.Stream, AckFloor: c.AckFloor.Stream,
			DeadLettered: c.DeadLettered, DeadLettersLost: c.DeadLettersLost,
			LastActive: unixMilli(last), Oldest: unixMilli(c.Oldest),
		})
	}
	sel.Lag, sel.Untracked = ring.since(sm.Name, since)
	return sel
}

// dashMsg is one message of a list.
type dashMsg struct {
	Seq        uint64      `json:"seq"`
	Subject    string      `json:"subject"`
	Time       int64       `json:"time"`
	Headers    []msgHeader `json:"headers"`
	DeadLetter *deadLetter `json:"dead_letter,omitempty"`
	Payload    payload     `json:"payload"`
}

// deadLetter is what the Bus-Dlq-* headers say (docs/api.md).
type deadLetter struct {
	Reason       string `json:"reason"`
	Stream       string `json:"stream"`
	Subject      string `json:"subject"`
	Sequence     string `json:"sequence"`
	Consumer     string `json:"consumer"`
	Deliveries   string `json:"deliveries"`
	RedriveCount string `json:"redrive_count,omitempty"`
}

// payload is a message body for reading: text when it is printable
// UTF-8, else a hex dump; cut to a limit.
type payload struct {
	Encoding  string `json:"encoding"` // "text" or "hex"
	Text      string `json:"text"`
	Size      int    `json:"size"`
	Truncated bool   `json:"truncated"`
}

func newPayload(data []byte, limit int) payload {
	p := payload{Encoding: "text", Size: len(data)}
	text := printable(data)
	if len(data) > limit {
		data, p.Truncated = data[:limit], true
		for text && len(data) > 0 { // whole characters only
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size > 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	if !text {
		p.Encoding, p.Text = "hex", hex.Dump(data)
		return p
	}
	p.Text = string(data)
	return p
}

// printable reports whether b reads as text: valid UTF-8 without control
// characters other than tab and line breaks.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < ' ' && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}

func newDashMsg(m storedMsg, limit int) dashMsg {
	hs := parseHeaders(m.Header)
	d := dashMsg{Seq: m.Seq, Subject: m.Subject, Time: unixMilli(m.Time), Headers: hs, Payload: newPayload(m.Data, limit)}
	if headerOf(hs, "Bus-Dlq-Subject") != "" {
		d.DeadLetter = &deadLetter{
			Reason: headerOf(hs, "Bus-Dlq-Reason"), Stream: headerOf(hs, "Bus-Dlq-Stream"),
			Subject: headerOf(hs, "Bus-Dlq-Subject"), Sequence: headerOf(hs, "Bus-Dlq-Sequence"),
			Consumer: headerOf(hs, "Bus-Dlq-Consumer"), Deliveries: headerOf(hs, "Bus-Dlq-Deliveries"),
			RedriveCount: headerOf(hs, "Bus-Redrive-Count"),
		}
	}
	return d
}

// serveDashboardMessages lists up to limit messages of a stream from
// seq from on (its first by default), payloads cut to dashPreviewBytes;
// next_seq is where the next page starts, 0 at the end.
func (m *Server) serveDashboardMessages(w http.ResponseWriter, r *http.Request) {
	rights, ok := m.messageReader(w, r)
	if !ok {
		return
	}
	stream, ok := streamParam(w, r)
	if !ok {
		return
	}
	q := query{r: r}
	from, limit := q.uint64("from"), q.int("limit")
	if q.err != nil {
		dashboardError(w, http.StatusBadRequest, q.err.Error())
		return
	}
	if limit <= 0 {
		limit = dashPageDefault
	}
	limit = min(limit, dashPageMax)
	ctx, cancel := context.WithTimeout(r.Context(), dashListTimeout)
	defer cancel()
	from = max(from, 1)
	out := struct {
		Stream   string    `json:"stream"`
		Messages []dashMsg `json:"messages"`
		NextSeq  uint64    `json:"next_seq"`
	}{Stream: stream, Messages: []dashMsg{}}
	for seq := from; ; {
		msg, err := m.readMsg(ctx, rights, stream, seq, true)
		if isNoMessage(err) {
			break
		}
		if err != nil {
			dashboardFail(w, err)
			return
		}
		if len(out.Messages) == limit {
			out.NextSeq = msg.Seq
			break
		}
		out.Messages = append(out.Messages, newDashMsg(msg, dashPreviewBytes))
		seq = msg.Seq + 1
	}
	dashboardJSON(w, http.StatusOK, out)
}

// serveDashboardMessage answers one message with its payload whole (up
// to dashFullBytes).
func (m *Server) serveDashboardMessage(w http.ResponseWriter, r *http.Request) {
	rights, ok := m.messageReader(w, r)
	if !ok {
		return
	}
	stream, ok := streamParam(w, r)
	if !ok {
		return
	}
	seq, err := parseSeq(r.PathValue("seq"))
	if err != nil {
		dashboardError(w, http.StatusBadRequest, err.Error())
		return
	}
	msg, err := m.readMsg(r.Context(), rights, stream, seq, false)
	if err != nil {
		dashboardFail(w, err)
		return
	}
	dashboardJSON(w, http.StatusOK, newDashMsg(msg, dashFullBytes))
}

// isNoMessage reports the API's "no message found" (10037): the end of a
// list.
func isNoMessage(err error) bool {
	var e *jsError
	return errors.As(err, &e) && e.ErrCode == 10037
}
