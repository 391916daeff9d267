package jetlog

// How requests reach the appender and how they are answered: a bounded
// channel for everything callers may wait on (and AppendAsync, which
// waits only while it is full), a list that never blocks for DeleteAsync,
// and replies by waking the caller or calling its callback.

type opKind uint8

const (
	opAppend opKind = iota
	opDelete
	opPurge
	opExpire
	opConfig
	opClose
	opSync
	opEvict // drop idle sections (tests use it; the ticker does it in production)
	opLastMsgID
	opSkip
)

// request is what producers hand to the appender. The appender replies by
// filling the result fields and sending on done, or, for an asynchronous
// append, by calling cb and returning the request to the pool.
type request struct {
	op     opKind
	msgs   []Msg
	one    [1]Msg
	expect Expect // checked for every message of msgs
	acks   []PubAck
	seq    uint64
	purge  PurgeOptions
	cfg    StreamConfig
	n      uint64
	idle   int64  // opEvict: sections unused since before this (unix ns) go
	id     string // opLastMsgID
	err    error
	done   chan struct{} // capacity 1
	async  bool          // reply by callback (cb or deleted), not on done
	cb     func(PubAck, error)
	delCB  func(error)

	// atomic: msgs are stored all or none, with expects[i] (if not nil)
	// instead of expect for msgs[i] (AppendAtomic).
	atomic  bool
	expects []Expect
}

func (l *Log) getReq() *request {
	if r, ok := l.pool.Get().(*request); ok {
		return r
	}
	return &request{done: make(chan struct{}, 1)}
}

func (l *Log) putReq(r *request) {
	done, acks := r.done, r.acks[:0]
	*r = request{done: done, acks: acks}
	l.pool.Put(r)
}

// send hands r to the appender and waits for the reply.
func (l *Log) send(r *request) error {
	if err := l.enqueue(r); err != nil {
		return err
	}
	<-r.done
	return nil
}

// enqueue puts r on the appender's queue, blocking while it is full. No
// request enters it once Close has begun, so the close request is the
// last one the appender takes.
func (l *Log) enqueue(r *request) error {
	l.sendMu.RLock()
	defer l.sendMu.RUnlock()
	if l.closing {
		return ErrClosed
	}
	l.reqs <- r
	return nil
}

// reply hands the result of r to its caller: a synchronous caller is
// woken; an asynchronous one's callback runs here, on the appender, after
// r went back to the pool.
func (l *Log) reply(r *request) {
	if !r.async {
		r.done <- struct{}{}
		return
	}
	var ack PubAck
	if len(r.acks) > 0 {
		ack = r.acks[0]
	}
	cb, delCB, err := r.cb, r.delCB, r.err
	l.putReq(r)
	switch {
	case cb != nil:
		cb(ack, err)
	case delCB != nil:
		delCB(err)
	}
}

// takeDeferred appends the waiting DeleteAsync requests to batch; with
// last set, later ones are refused (the appender is closing).
func (l *Log) takeDeferred(batch []*request, last bool) []*request {
	l.deferMu.Lock()
	defer l.deferMu.Unlock()
	batch = append(batch, l.deferred...)
	clear(l.deferred)
	l.deferred = l.deferred[:0]
	l.deferStop = l.deferStop || last
	return batch
}
