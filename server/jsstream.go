package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// maxIngestBatch bounds how many published messages one commit stores.
const maxIngestBatch = 1024

// stream is a JetStream stream: a jetlog.Log plus the subscriptions that
// capture its subjects and the goroutine that appends what they capture,
// in arrival order, acking each publish once it is durable.
type stream struct {
	js      *jetStream
	name    string
	dir     string
	log     *jetlog.Log
	created time.Time

	mu        sync.Mutex // guards the fields below
	cfg       streamConfig
	capture   []*subscription
	consumers map[string]*consumer

	ingest chan *inMsg
	stop   chan struct{}
	done   chan struct{}

	lastMsgID string // owned by the ingest goroutine, like lastIDRead
	// lastIDRead is set once lastMsgID holds the id of the newest stored
	// message. It is read on the first publish, not at open, so a restart
	// does not load the log's newest segment.
	lastIDRead bool
}

// inMsg is a captured publish waiting to be stored.
type inMsg struct {
	subject string
	reply   string
	hdr     []byte
	data    []byte
}

// logConfig maps the API config to jetlog's.
func (c streamConfig) logConfig() jetlog.StreamConfig {
	raw, _ := json.Marshal(c)
	return jetlog.StreamConfig{
		Name:                 c.Name,
		Subjects:             c.Subjects,
		Retention:            jetlog.Retention(c.Retention),
		MaxConsumers:         c.MaxConsumers,
		MaxMsgs:              c.MaxMsgs,
		MaxBytes:             c.MaxBytes,
		MaxAge:               time.Duration(c.MaxAge),
		MaxMsgsPerSubject:    c.MaxMsgsPerSubject,
		MaxMsgSize:           c.MaxMsgSize,
		Discard:              jetlog.Discard(c.Discard),
		DiscardNewPerSubject: c.DiscardNewPerSubject,
		Storage:              jetlog.Storage(c.Storage),
		DuplicateWindow:      time.Duration(c.DuplicateWindow),
		Durability:           jetlog.Durability(c.Durability),
		SyncInterval:         time.Duration(c.SyncInterval),
		Raw:                  raw,
	}
}

// normalize applies the reference's defaults (JETSTREAM.md §4.1) and
// validates; the result is what responses echo.
func (c *streamConfig) normalize() *apiError {
	if !validName(c.Name) {
		return errStreamConfig("invalid stream name %q", c.Name)
	}
	if len(c.Subjects) == 0 {
		c.Subjects = []string{c.Name}
	}
	seen := map[string]bool{}
	for _, s := range c.Subjects {
		if !subjects.ValidSubject(s) {
			return errStreamConfig("invalid subject %q", s)
		}
		if seen[s] {
			return errStreamConfig("duplicate subjects detected")
		}
		seen[s] = true
		if overlaps(s, "$JS.API.>") {
			return errStreamConfig("subjects that overlap with jetstream api require no-ack to be true")
		}
	}
	for i, a := range c.Subjects {
		for _, b := range c.Subjects[i+1:] {
			if overlaps(a, b) {
				return errStreamConfig("subjects overlap")
			}
		}
	}
	if c.Retention == "" {
		c.Retention = "limits"
	}
	if c.Discard == "" {
		c.Discard = "old"
	}
	if c.Storage == "" {
		c.Storage = "file"
	}
	if c.Compression == "" {
		c.Compression = "none"
	}
	if c.Durability == "" {
		c.Durability = string(jetlog.DurabilityAlways)
	}
	for _, p := range []*int64{&c.MaxConsumers, &c.MaxMsgs, &c.MaxBytes, &c.MaxMsgsPerSubject} {
		if *p == 0 || *p < -1 {
			*p = -1
		}
	}
	if c.MaxMsgSize == 0 || c.MaxMsgSize < -1 {
		c.MaxMsgSize = -1
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Replicas > 1 {
		return errReplicas()
	}
	if c.MaxAge < 0 {
		return errStreamConfig("max age needs to be >= 0")
	}
	if c.MaxAge > 0 && c.MaxAge < int64(100*time.Millisecond) {
		return errStreamConfig("max age needs to be >= 100ms")
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = int64(jetlog.DefaultDuplicateWindow)
		if c.MaxAge > 0 && c.MaxAge < c.DuplicateWindow {
			c.DuplicateWindow = c.MaxAge
		}
	}
	if c.MaxAge > 0 && c.DuplicateWindow > c.MaxAge {
		return errStreamConfig("duplicates window can not be larger then max age")
	}
	if len(c.ConsumerLimits) == 0 {
		c.ConsumerLimits = json.RawMessage("{}")
	}
	for _, k := range []string{"mirror", "sources", "subject_transform", "republish"} {
		if raw, ok := c.extra[k]; ok && string(raw) != "null" {
			return errStreamConfig("%s is not supported by bus", k)
		}
	}
	if err := c.logConfig().Normalized().Validate(); err != nil {
		return errStreamConfig("%v", err)
	}
	return nil
}

// validName applies the stream and consumer name rules.
func validName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '.', '*', '>', '/', '\\', ' ', '\t', '\r', '\n', '\f':
			return false
		}
	}
	return true
}

// overlaps reports whether some subject matches both patterns.
func overlaps(a, b string) bool {
	return subjects.Matches(a, b) || subjects.Matches(b, a) || subjectsIntersect(a, b)
}

// subjectsIntersect compares two patterns token by token: they intersect
// unless some position holds two different literal tokens, or one runs out
// of tokens before the other without a '>'.
func subjectsIntersect(a, b string) bool {
	at, bt := splitTokens(a), splitTokens(b)
	for i := 0; ; i++ {
		switch {
		case i == len(at) && i == len(bt):
			return true
		case i == len(at) || i == len(bt):
			return false
		case at[i] == ">" || bt[i] == ">":
			return true
		case at[i] == "*" || bt[i] == "*" || at[i] == bt[i]:
			continue
		default:
			return false
		}
	}
}

func splitTokens(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// openStream opens (or creates) the log for cfg under dir and starts its
// ingest goroutine and capture subscriptions.
func (js *jetStream) openStream(cfg streamConfig, dir string) (*stream, error) {
	l, err := jetlog.Open(dir, cfg.logConfig(), jetlog.Options{Logger: js.log})
	if err != nil {
		return nil, err
	}
	created := time.Now().UTC()
	if cfg.Storage != "memory" {
		if _, t, err := jetlog.LoadConfig(nil, dir); err == nil && !t.IsZero() {
			created = t.UTC()
		}
	}
	st := &stream{
		js:        js,
		name:      cfg.Name,
		dir:       dir,
		log:       l,
		created:   created,
		cfg:       cfg,
		consumers: map[string]*consumer{},
		ingest:    make(chan *inMsg, 4096),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if err := st.subscribe(); err != nil {
		_ = l.Close()
		return nil, err
	}
	go st.run()
	return st, nil
}

func (st *stream) subscribe() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, sub := range st.capture {
		st.js.srv.unsubscribeInternal(sub)
	}
	st.capture = st.capture[:0]
	for _, subj := range st.cfg.Subjects {
		sub, err := st.js.srv.subscribeInternal(subj, st.captureMsg)
		if err != nil {
			return err
		}
		st.capture = append(st.capture, sub)
	}
	return nil
}

// captureMsg runs on the publisher's reader goroutine: it copies the
// message and queues it for the ingest goroutine, keeping arrival order.
func (st *stream) captureMsg(subject, reply []byte, hdr int, msg []byte) bool {
	m := &inMsg{subject: string(subject), reply: string(reply)}
	buf := append([]byte(nil), msg...)
	if hdr >= 0 {
		m.hdr, m.data = buf[:hdr:hdr], buf[hdr:]
	} else {
		m.data = buf
	}
	select {
	case st.ingest <- m:
	case <-st.stop:
	}
	return true
}

// run is the ingest goroutine: it takes whatever publishes are waiting,
// stores them with one commit, then acks them.
func (st *stream) run() {
	defer close(st.done)
	batch := make([]*inMsg, 0, maxIngestBatch)
	for {
		select {
		case m := <-st.ingest:
			batch = append(batch[:0], m)
		case <-st.stop:
			return
		}
	gather:
		for len(batch) < maxIngestBatch {
			select {
			case m := <-st.ingest:
				batch = append(batch, m)
			default:
				break gather
			}
		}
		st.store(batch)
		st.notifyConsumers()
	}
}

// store appends a batch, splitting it around messages that carry
// Nats-Expected-* preconditions, which are checked one at a time.
func (st *stream) store(batch []*inMsg) {
	start := 0
	for i, m := range batch {
		if hasExpectations(m.hdr) {
			st.appendRun(batch[start:i])
			st.appendChecked(m)
			start = i + 1
		}
	}
	st.appendRun(batch[start:])
}

func hasExpectations(hdr []byte) bool {
	return len(hdr) > 0 && containsFold(hdr, "Nats-Expected-")
}

// containsFold reports whether b contains s, ignoring ASCII case.
func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if bytes.EqualFold(b[i:i+len(s)], []byte(s)) {
			return true
		}
	}
	return false
}

// appendRun stores plain messages in one commit. A message jetlog refuses
// (discard new, too large) gets its error ack and the rest continue.
func (st *stream) appendRun(run []*inMsg) {
	st.readLastMsgID()
	for len(run) > 0 {
		msgs := make([]jetlog.Msg, len(run))
		for i, m := range run {
			msgs[i] = jetlog.Msg{Subject: m.subject, Header: m.hdr, Data: m.data}
		}
		acks, err := st.log.AppendBatch(msgs)
		for i, ack := range acks {
			st.stored(run[i], ack)
		}
		run = run[len(acks):]
		if err == nil || len(run) == 0 {
			return
		}
		st.ackError(run[0], storeError(err))
		run = run[1:]
	}
}

// appendChecked stores one message after checking its Nats-Expected-*
// headers against the stream as it is now.
func (st *stream) appendChecked(m *inMsg) {
	st.readLastMsgID()
	if v, ok := headerValue(m.hdr, "Nats-Expected-Stream"); ok && v != st.name {
		st.ackError(m, errExpectedStream())
		return
	}
	state := st.log.State()
	if v, ok := headerValue(m.hdr, "Nats-Expected-Last-Sequence"); ok {
		if want, err := strconv.ParseUint(v, 10, 64); err != nil || want != state.LastSeq {
			st.ackError(m, errWrongLastSeq(state.LastSeq))
			return
		}
	}
	if v, ok := headerValue(m.hdr, "Nats-Expected-Last-Subject-Sequence"); ok {
		subj := m.subject
		if s, ok := headerValue(m.hdr, "Nats-Expected-Last-Subject-Sequence-Subject"); ok && s != "" {
			subj = s
		}
		last := st.log.LastSeqBySubject(subj)
		if want, err := strconv.ParseUint(v, 10, 64); err != nil || want != last {
			st.ackError(m, errWrongLastSeq(last))
			return
		}
	}
	if v, ok := headerValue(m.hdr, "Nats-Expected-Last-Msg-Id"); ok && v != st.lastMsgID {
		st.ackError(m, errWrongLastMsgID(st.lastMsgID))
		return
	}
	ack, err := st.log.Append(m.subject, m.hdr, m.data)
	if err != nil {
		st.ackError(m, storeError(err))
		return
	}
	st.stored(m, ack)
}

// readLastMsgID reads the msg id of the newest stored message, once,
// before the first append can change which message that is.
func (st *stream) readLastMsgID() {
	if st.lastIDRead {
		return
	}
	st.lastIDRead = true
	if last, err := st.log.Get(st.log.State().LastSeq); err == nil {
		st.lastMsgID, _ = headerValue(last.Header, "Nats-Msg-Id")
	}
}

// storeError maps jetlog's refusals to the reference's pub-ack errors.
func storeError(err error) *apiError {
	switch {
	case errors.Is(err, jetlog.ErrMaxMsgs):
		return errMaxMsgs()
	case errors.Is(err, jetlog.ErrMaxBytes):
		return errMaxBytes()
	case errors.Is(err, jetlog.ErrMaxMsgsPerSubject):
		return errMaxMsgsPerSubject()
	case errors.Is(err, jetlog.ErrMsgTooLarge):
		return errMsgTooLarge()
	default:
		return errStoreFailed(err)
	}
}

// stored acks a message jetlog has made durable.
func (st *stream) stored(m *inMsg, ack jetlog.PubAck) {
	if !ack.Duplicate {
		if id, ok := headerValue(m.hdr, "Nats-Msg-Id"); ok {
			st.lastMsgID = id
		}
		st.applyInterestRetention(ack.Seq)
	}
	if m.reply == "" {
		return
	}
	b, _ := json.Marshal(pubAck{Stream: st.name, Seq: ack.Seq, Duplicate: ack.Duplicate})
	st.js.srv.sendInternal(m.reply, "", nil, b)
}

func (st *stream) ackError(m *inMsg, e *apiError) {
	if m.reply == "" {
		return
	}
	b, _ := json.Marshal(pubAck{Error: e, Stream: st.name})
	st.js.srv.sendInternal(m.reply, "", nil, b)
}

// applyInterestRetention drops a message nobody is interested in: with
// interest retention, a stream without consumers keeps nothing.
func (st *stream) applyInterestRetention(seq uint64) {
	st.mu.Lock()
	drop := st.cfg.Retention == "interest" && len(st.consumers) == 0
	st.mu.Unlock()
	if drop {
		_ = st.log.Delete(seq)
	}
}

// info snapshots the stream for API responses.
func (st *stream) info(typ string) streamInfo {
	s := st.log.State()
	st.mu.Lock()
	cfg := st.cfg
	consumers := len(st.consumers)
	st.mu.Unlock()
	state := streamState{
		Msgs:          s.Msgs,
		Bytes:         s.Bytes,
		FirstSeq:      s.FirstSeq,
		LastSeq:       s.LastSeq,
		NumSubjects:   s.NumSubjects,
		NumDeleted:    int(s.NumDeleted),
		ConsumerCount: consumers,
	}
	if s.Msgs > 0 {
		state.FirstTime, state.LastTime = s.FirstTime.UTC(), s.LastTime.UTC()
	} else if s.LastSeq > 0 {
		state.LastTime = s.LastTime.UTC()
	}
	return streamInfo{
		Type:    typ,
		Config:  cfg,
		Created: st.created,
		State:   state,
		Cluster: &clusterInfo{Leader: st.js.srv.name},
		TS:      time.Now().UTC(),
	}
}

// close stops capture and ingest and closes the log; queued publishes
// that were not yet stored are not acked (clients retry).
func (st *stream) close() error { return st.closeWith("409 Consumer Deleted") }

// closeWith is close telling waiting pulls status.
func (st *stream) closeWith(status string) error {
	st.mu.Lock()
	for _, sub := range st.capture {
		st.js.srv.unsubscribeInternal(sub)
	}
	st.capture = nil
	consumers := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		consumers = append(consumers, c)
	}
	st.mu.Unlock()
	for _, c := range consumers {
		c.closeWith(status)
	}
	close(st.stop)
	<-st.done
	return st.log.Close()
}

// destroy closes the stream and removes its files.
func (st *stream) destroy() error {
	if err := st.close(); err != nil {
		return err
	}
	if st.cfg.Storage == "memory" {
		return nil
	}
	return jetlog.RemoveStream(nil, st.dir)
}

func (st *stream) config() streamConfig {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cfg
}

func (st *stream) numConsumers() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.consumers)
}
