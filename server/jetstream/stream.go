package jetstream

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// stream is a JetStream stream: a jetlog.Log, the subscriptions that
// capture its subjects, and its consumers. A captured publish goes
// straight to the log's appender (AppendAsync) from the publisher's
// reader goroutine, with its Nats-Expected-* preconditions; the appender
// checks them where it assigns the seq, commits, and calls back, and the
// callback acks the publisher: one hop from publish to fsync to ack.
type stream struct {
	sh      *shared
	name    string
	memory  bool // memory storage (for the server's limits)
	dir     string
	log     *jetlog.Log
	src     *consumerReader
	created time.Time
	pubs    sync.Pool // *pub

	mu        sync.Mutex // guards the fields below
	cfg       streamConfig
	capture   []Subscription
	consumers map[string]*consumer
	closing   bool // close has begun

	// live is the consumers for the append path, which reads it without
	// the lock; dropUnheard is whether an interest stream has no
	// consumer, so that what it stores is dropped at once.
	live        atomic.Pointer[[]*consumer]
	dropUnheard atomic.Bool
	// sealed is cfg.Sealed for the publish path: a sealed stream takes
	// no more messages; noAck is cfg.NoAck: it answers no publish, neither
	// with an ack nor with an error, as the reference.
	sealed, noAck atomic.Bool
	// writeFailing is set while publishes fail for the disk's sake (full,
	// read-only, fenced): the first failure and the first success after
	// it are logged, not every publish.
	writeFailing atomic.Bool
	// tr is the config's subject transform and republish, compiled.
	tr atomic.Pointer[transforms]
	// sourcers copy into this stream (its mirror or sources, under mu);
	// watchers are those copying out of it, woken by its appends.
	sourcers []*sourcer
	watchers atomic.Pointer[[]*sourcer]
	// batches are the open atomic batches (batch.go); counter is
	// cfg.AllowMsgCounter, which never changes, for the publish path, and
	// counterMu serialises its increments (counter.go).
	batches   batches
	fast      fastBatches // the open fast batches (batchfast.go)
	counter   atomic.Bool
	counterMu sync.Mutex
	// sched holds the message schedules (allow_msg_schedules; schedule.go).
	sched atomic.Pointer[scheduler]
	// suspended says why the owner's rights no longer cover the stream's
	// republish and sources (rightscheck.go), captureRefused why they no
	// longer cover its subject transform; nil while they do.
	suspended, captureRefused atomic.Pointer[apiError]
	// cfgGen counts config updates, so a sourcer of this stream checks
	// again what it may read of it.
	cfgGen atomic.Uint64

	publishes publishStats // counters and ack latency for monitoring (stats.go)
}

// openStream opens (or creates) the log for cfg under dir and starts its
// capture subscriptions. It does disk I/O: callers hold no lock.
func openStream(sh *shared, cfg streamConfig, dir string) (*stream, error) {
	return openStreamFilled(sh, cfg, dir, nil)
}

// openStreamFilled is openStream with fill run on the log before anything
// can be captured into it: a memory stream's restore writes its messages
// and consumers there, as a file stream's does beside the store.
func openStreamFilled(sh *shared, cfg streamConfig, dir string, fill func(*jetlog.Log) error) (*stream, error) {
	// The log reports subjects that need a delete marker from its own
	// goroutine, possibly before Open returns.
	var self atomic.Pointer[stream]
	expired := func(subjects []string) {
		if st := self.Load(); st != nil {
			go st.storeMarkers(subjects)
		}
	}
	lopts := sh.logOptions()
	lopts.OnSubjectExpired = expired
	l, err := jetlog.Open(dir, cfg.logConfig(), lopts)
	if err != nil {
		return nil, err
	}
	if err := startAtFirstSeq(l, cfg.FirstSeq); err != nil {
		_ = l.Close()
		return nil, err
	}
	if fill != nil {
		if err := fill(l); err != nil {
			_ = l.Close()
			return nil, err
		}
	}
	created := sh.now().UTC()
	if cfg.Storage != jetlog.StorageMemory {
		if _, t, err := jetlog.LoadConfigWith(dir, sh.logOptions()); err == nil && !t.IsZero() {
			created = t.UTC()
		}
	}
	st := &stream{
		sh:        sh,
		name:      cfg.Name,
		memory:    cfg.Storage == jetlog.StorageMemory,
		dir:       dir,
		log:       l,
		src:       &consumerReader{log: l, core: sh.core},
		created:   created,
		cfg:       cfg,
		consumers: map[string]*consumer{},
		publishes: newPublishStats(),
	}
	self.Store(st)
	st.sealed.Store(cfg.Sealed)
	st.noAck.Store(cfg.NoAck)
	st.counter.Store(cfg.AllowMsgCounter)
	st.setTransforms(cfg)
	st.mu.Lock()
	st.publishConsumersLocked()
	st.mu.Unlock()
	if err := st.startSchedules(cfg); err != nil {
		_ = l.Close()
		return nil, err
	}
	if err := st.subscribe(); err != nil {
		st.stopSchedules()
		_ = l.Close()
		return nil, err
	}
	st.startSourcing()
	return st, nil
}

// subscribe (re)creates the capture subscriptions for the configured
// subjects. They get the publisher's Rights, for a schedule's owner
// (scheduleowner.go); the core hands them over without a copy or an
// allocation.
func (st *stream) subscribe() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, sub := range st.capture {
		st.sh.core.Unsubscribe(sub)
	}
	st.capture = st.capture[:0]
	for _, subj := range st.cfg.Subjects {
		sub, err := subscribeCapture(st.sh.core, subj, st.captureMsg)
		if err != nil {
			return err
		}
		st.capture = append(st.capture, sub)
	}
	return nil
}

// pub is one captured publish on its way to the log. Pubs are pooled,
// each with its completion bound once, so that a publish allocates only
// its copy of the message (and of the reply subject, if any).
type pub struct {
	st      *stream
	subject string
	reply   string
	buf     []byte // header block and payload, copied off the reader's buffer
	done    func(jetlog.PubAck, error)
	start   time.Time  // when it was captured, for the ack latency
	msg     jetlog.Msg // as handed to the log (for republish)
	// ackBuf is its pub ack being encoded: the pub's own, since a rollup
	// completes on the publisher's reader goroutine, the others on the
	// appender's.
	ackBuf []byte
	// inFast says it is a message of a fast batch (batchfast.go), which
	// its reply subject, fast, names; fastAnswer is where its errors go.
	inFast     bool
	fast       fastBatchMsg
	fastAnswer string
	fastGroup  *jetlog.Group
}

// captureMsg runs on the publisher's reader goroutine: it copies the
// message and hands it to the appender, which keeps arrival order. A
// full appender queue blocks it (the publisher waits for the disk).
// from is the publisher's Rights (nil: the server's own).
func (st *stream) captureMsg(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	if hdr >= 0 {
		if mt, ok := from.(MsgTrace); ok {
			return st.captureTraced(mt, subject, reply, hdr, msg)
		}
	}
	if bytes.HasSuffix(reply, []byte(fastBatchSuffix)) {
		st.publishFast(subject, reply, hdr, msg) // never stored as a plain publish
		return true
	}
	if st.noAck.Load() {
		reply = nil
	}
	if st.sealed.Load() {
		st.ackError(string(reply), errStreamSealed())
		return true
	}
	if st.full() {
		st.ackError(string(reply), st.fullError())
		return true
	}
	tr := st.tr.Load()
	if tr.refused != nil {
		st.ackError(string(reply), tr.refused)
		return true
	}
	p, _ := st.pubs.Get().(*pub)
	if p == nil {
		p = &pub{st: st}
		p.done = p.stored
	}
	p.subject, p.reply = tr.storedSubject(string(subject)), string(reply)
	p.start = time.Now() // real time: the latency is about I/O, not message time
	p.buf = append(p.buf[:0], msg...)
	m := jetlog.Msg{Subject: p.subject, Data: p.buf}
	var expect jetlog.Expect
	if st.counter.Load() {
		st.publishCounter(p, m, hdr)
		return true
	}
	if hdr >= 0 {
		m.Header, m.Data = p.buf[:hdr:hdr], p.buf[hdr:]
		expects, rollup, ttl, other := publishHeaders(m.Header)
		if other {
			// A schedule's owner is set before a batch stages it.
			var owner Rights
			var e *apiError
			if m.Header, owner, e = st.ownSchedule(from, m.Header); e == nil && st.publishSpecial(p, m) {
				return true
			}
			if e == nil {
				e = st.refuseHeaders(m.Header)
			}
			if e == nil {
				var schedule bool
				m.Header, schedule, e = st.checkOwnedSchedule(owner, p.subject, m.Header)
				rollup = rollup || schedule
			}
			if e != nil {
				st.ackError(p.reply, e)
				st.pubs.Put(p)
				return true
			}
		}
		if expects {
			var e *apiError
			if expect, e = st.expectations(m.Header); e != nil {
				st.ackError(p.reply, e)
				st.pubs.Put(p)
				return true
			}
		}
		if ttl {
			var e *apiError
			if m.Header, e = st.checkTTL(m.Header); e != nil {
				st.ackError(p.reply, e)
				st.pubs.Put(p)
				return true
			}
		}
		if rollup {
			if kind, ok := headerValue(m.Header, "Nats-Rollup"); ok { // an empty one is no rollup
				p.msg = m // for republish and schedules
				st.rollup(p, m, expect, kind)
				return true
			}
		}
	}
	p.msg = m
	st.log.AppendAsync(m, expect, p.done)
	return true
}

// rollup stores a message carrying Nats-Rollup and then removes what it
// replaces: the older messages of its subject ("sub") or of the whole
// stream ("all"). Rollups are rare (a KV purge, a snapshot), so this
// waits for both on the publisher's reader goroutine: the store is
// synced before the purge, and the ack goes out after it.
func (st *stream) rollup(p *pub, m jetlog.Msg, expect jetlog.Expect, kind string) {
	cfg := st.config()
	var e *apiError
	switch {
	case !cfg.AllowRollup || cfg.DenyPurge:
		e = newAPIError(500, 10111, "rollup not permitted")
	case kind != "sub" && kind != "all":
		e = newAPIError(500, 10111, "rollup value invalid: %q", kind)
	}
	if e != nil {
		st.ackError(p.reply, e)
		st.pubs.Put(p)
		return
	}
	ack, err := st.log.Append(m, expect)
	if err == nil && !ack.Duplicate {
		purge := jetlog.PurgeOptions{Seq: ack.Seq}
		if kind == "sub" {
			purge.Subject = m.Subject
		}
		if _, perr := st.log.Purge(purge); perr != nil {
			st.sh.log.Error("rollup purge", "stream", st.name, "seq", ack.Seq, "err", perr)
		}
	}
	p.stored(ack, err)
}

// stored is a pub's completion, on the appender goroutine.
func (p *pub) stored(ack jetlog.PubAck, err error) {
	st := p.st
	if err != nil {
		if isDiskError(err) && !st.writeFailing.Swap(true) {
			st.sh.log.Error("stream writes failing; its publishes are refused", "stream", st.name, "err", err)
		}
		if p.inFast {
			st.publishes.refused.Add(1)
			st.fastStored(p, ack, err)
		} else {
			st.ackError(p.reply, storeError(err))
		}
	} else {
		if st.writeFailing.Load() && st.writeFailing.Swap(false) {
			st.sh.log.Info("stream writes again", "stream", st.name)
		}
		if !ack.Duplicate && st.dropUnheard.Load() {
			st.log.DeleteAsync(ack.Seq, nil) // an interest stream nobody is interested in
		}
		if p.inFast {
			st.fastStored(p, ack, nil)
		} else if p.reply != "" {
			p.ackBuf = appendPubAck(p.ackBuf[:0], st.name, st.sh.domain, ack)
			st.sh.core.Publish(p.reply, "", nil, p.ackBuf)
		}
		st.publishes.stored(p.start, ack.Duplicate)
		st.noteStored(p.msg, ack)
		st.notifyConsumers()
		if t := st.tr.Load(); t.republish != nil && !ack.Duplicate {
			p.msg.Time = time.Unix(0, ack.TS)
			st.republish(t, p.msg, ack.Seq)
		}
	}
	p.reply, p.msg, p.inFast, p.fastAnswer, p.fastGroup = "", jetlog.Msg{}, false, "", nil
	st.pubs.Put(p)
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
		// Not waited for: the deletes of one ack step share the commit
		// (and the fsync) after the one running, rather than taking one
		// each on this consumer's goroutine. Already gone is fine.
		st.log.DeleteAsync(seq, nil)
	}
}

// info snapshots the stream for API responses.
func (st *stream) info(typ string) streamInfo {
	s := st.log.State()
	st.mu.Lock()
	cfg := st.cfg
	consumers := st.publicCountLocked()
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
	info := streamInfo{
		Type:      typ,
		Config:    cfg,
		Created:   st.created,
		State:     state,
		Cluster:   &clusterInfo{Leader: st.sh.server},
		TS:        st.sh.now().UTC(),
		Suspended: st.suspended.Load(),
	}
	if typ != typeStreamCreate {
		info.Domain = st.sh.domain // as the reference, which leaves it out of a create's answer
	}
	if typ != "" { // an answer about this stream, not a list's
		info.Config.Metadata = st.sh.withServerLevel(cfg.Metadata)
	}
	st.mu.Lock()
	sourcers := st.sourcers
	st.mu.Unlock()
	for _, s := range sourcers {
		if s.mirror {
			info.Mirror = s.info()
		} else {
			info.Sources = append(info.Sources, s.info())
		}
	}
	if sourcers == nil && info.Suspended != nil {
		// Stopped by the suspension: each source says so.
		if m := cfg.Mirror; m != nil {
			info.Mirror = stoppedSource(*m, info.Suspended)
		}
		for _, s := range cfg.Sources {
			info.Sources = append(info.Sources, stoppedSource(*s, info.Suspended))
		}
	}
	return info
}

// close stops capture, ingest and the consumers (telling waiting pulls
// status) and closes the log; queued publishes that were not yet stored
// are not acked (clients retry).
func (st *stream) close(status string) error {
	st.mu.Lock()
	st.closing = true // no sourcer starts again (a rights check may be resuming it)
	st.mu.Unlock()
	st.dropBatches()
	st.dropFastBatches()
	st.stopSchedules()
	st.stopSourcing()
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
	return st.log.Close()
}

// destroy closes the stream and removes its files.
func (st *stream) destroy() error {
	st.retireSourcers(func(*sourcer) bool { return true }) // their consumers on the origins go too
	if err := st.close("409 Consumer Deleted"); err != nil {
		return err
	}
	if st.config().Storage == jetlog.StorageMemory {
		return nil
	}
	return jetlog.RemoveStream(st.sh.fs, st.dir)
}

// setConfig takes an updated config (the log already has it).
func (st *stream) setConfig(cfg streamConfig) {
	st.mu.Lock()
	st.cfg = cfg
	st.mu.Unlock()
	st.cfgGen.Add(1)
	if !cfg.AllowAtomic {
		st.dropBatches()
	}
	if !cfg.AllowBatched {
		st.dropFastBatches()
	}
	st.sealed.Store(cfg.Sealed)
	st.noAck.Store(cfg.NoAck)
	st.setTransforms(cfg)
	st.enableSchedules(cfg)
}

func (st *stream) setTransforms(cfg streamConfig) {
	t := compileTransforms(cfg)
	if st.suspended.Load() != nil {
		t.republish = nil
	}
	t.refused = st.captureRefused.Load()
	st.tr.Store(&t)
}

func (st *stream) config() streamConfig {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cfg
}

// numConsumers counts the consumers clients see: not the direct ones a
// sourcing stream keeps here, which the reference does not show.
func (st *stream) numConsumers() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.publicCountLocked()
}

func (st *stream) publicCountLocked() int {
	n := 0
	for _, c := range st.consumers {
		if !c.cfg.Direct {
			n++
		}
	}
	return n
}

// startAtFirstSeq applies first_seq, as the reference does at every open:
// nothing below it is kept, and the next message gets at least it.
func startAtFirstSeq(l *jetlog.Log, first uint64) error {
	if first == 0 {
		return nil
	}
	if s := l.State(); s.Msgs > 0 && s.FirstSeq < first {
		if _, err := l.Purge(jetlog.PurgeOptions{Seq: first}); err != nil {
			return err
		}
	}
	return l.SkipTo(first)
}
