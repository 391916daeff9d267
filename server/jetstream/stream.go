package jetstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// maxIngestBatch bounds how many published messages one commit stores.
const maxIngestBatch = 1024

// stream is a JetStream stream: a jetlog.Log plus the subscriptions that
// capture its subjects, the goroutine that appends what they capture in
// arrival order, acking each publish once it is durable, and its
// consumers.
type stream struct {
	sh      *shared
	name    string
	dir     string
	log     *jetlog.Log
	src     *streamSource
	created time.Time

	mu        sync.Mutex // guards the fields below
	cfg       streamConfig
	capture   []Subscription
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

// openStream opens (or creates) the log for cfg under dir and starts its
// ingest goroutine and capture subscriptions. It does disk I/O: callers
// hold no lock.
func openStream(sh *shared, cfg streamConfig, dir string) (*stream, error) {
	l, err := jetlog.Open(dir, cfg.logConfig(), jetlog.Options{Logger: sh.log, Now: sh.now})
	if err != nil {
		return nil, err
	}
	created := sh.now().UTC()
	if cfg.Storage != jetlog.StorageMemory {
		if _, t, err := jetlog.LoadConfig(nil, dir); err == nil && !t.IsZero() {
			created = t.UTC()
		}
	}
	st := &stream{
		sh:        sh,
		name:      cfg.Name,
		dir:       dir,
		log:       l,
		src:       &streamSource{log: l, core: sh.core},
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

// subscribe (re)creates the capture subscriptions for the configured
// subjects.
func (st *stream) subscribe() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, sub := range st.capture {
		st.sh.core.Unsubscribe(sub)
	}
	st.capture = st.capture[:0]
	for _, subj := range st.cfg.Subjects {
		sub, err := st.sh.core.Subscribe(subj, st.captureMsg)
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
	case isNoSpace(err):
		return errInsufficientStorage()
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
	st.sh.core.Publish(m.reply, "", nil, b)
}

func (st *stream) ackError(m *inMsg, e *apiError) {
	if m.reply == "" {
		return
	}
	b, _ := json.Marshal(pubAck{Error: e, Stream: st.name})
	st.sh.core.Publish(m.reply, "", nil, b)
}

// applyInterestRetention drops a message nobody is interested in: with
// interest retention, a stream without consumers keeps nothing.
func (st *stream) applyInterestRetention(seq uint64) {
	st.mu.Lock()
	drop := st.cfg.Retention == jetlog.RetentionInterest && len(st.consumers) == 0
	st.mu.Unlock()
	if drop {
		_ = st.log.Delete(seq)
	}
}

// acked applies retention after a consumer acked seqs: a work queue
// drops them at once; an interest stream once every consumer is past
// them.
func (st *stream) acked(seqs []uint64) {
	st.mu.Lock()
	retention := st.cfg.Retention
	var others []*consumer
	if retention == jetlog.RetentionInterest {
		others = make([]*consumer, 0, len(st.consumers))
		for _, c := range st.consumers {
			others = append(others, c)
		}
	}
	st.mu.Unlock()
	if retention == jetlog.RetentionLimits {
		return
	}
next:
	for _, seq := range seqs {
		for _, c := range others {
			if !c.doneWith(seq) {
				continue next
			}
		}
		_ = st.log.Delete(seq) // already gone is fine
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
		Cluster: &clusterInfo{Leader: st.sh.server},
		TS:      st.sh.now().UTC(),
	}
}

// close stops capture, ingest and the consumers (telling waiting pulls
// status) and closes the log; queued publishes that were not yet stored
// are not acked (clients retry).
func (st *stream) close(status string) error {
	st.mu.Lock()
	for _, sub := range st.capture {
		st.sh.core.Unsubscribe(sub)
	}
	st.capture = nil
	consumers := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		consumers = append(consumers, c)
	}
	st.mu.Unlock()
	for _, c := range consumers {
		c.close(status)
	}
	close(st.stop)
	<-st.done
	return st.log.Close()
}

// destroy closes the stream and removes its files.
func (st *stream) destroy() error {
	if err := st.close("409 Consumer Deleted"); err != nil {
		return err
	}
	if st.config().Storage == jetlog.StorageMemory {
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
