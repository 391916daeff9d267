package server

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// chunkSize is the size of the blocks an outbound queue is built from. A
// queue grows by whole chunks, never by copying what it holds, and the
// writer hands all of them to one writev.
const chunkSize = 32 * 1024

// chunk is one block of queued bytes; b has capacity chunkSize.
type chunk struct{ b []byte }

// chunkPool recycles chunks between every connection of a server, so
// idle connections hold none and busy ones allocate nothing. It also
// counts the chunks out, which is the memory every outbound queue holds
// together: past limit (0: none), over wakes the shedder (shed.go), which
// closes the connection with the longest queue. Counting per chunk, not
// per message, keeps the shared counter off the per-message path.
type chunkPool struct {
	p     sync.Pool
	out   atomic.Int64  // chunks held by queues
	limit int64         // chunks; 0 for no bound
	shed  chan struct{} // capacity 1: the total is over the limit
}

func newChunkPool() *chunkPool {
	return &chunkPool{
		p:    sync.Pool{New: func() any { return &chunk{b: make([]byte, 0, chunkSize)} }},
		shed: make(chan struct{}, 1),
	}
}

// bound sets the total the queues may hold (bytes; 0 for no bound).
// Called before any connection exists.
func (p *chunkPool) bound(maxTotal int64) { p.limit = (maxTotal + chunkSize - 1) / chunkSize }

func (p *chunkPool) get() *chunk {
	if n := p.out.Add(1); p.limit > 0 && n > p.limit {
		select {
		case p.shed <- struct{}{}:
		default:
		}
	}
	return p.p.Get().(*chunk)
}

func (p *chunkPool) put(c *chunk) {
	c.b = c.b[:0]
	p.out.Add(-1)
	p.p.Put(c)
}

// over reports whether the queues together hold more than the limit.
func (p *chunkPool) over() bool { return p.limit > 0 && p.out.Load() > p.limit }

// heldBytes is what the queues hold together, in whole chunks.
func (p *chunkPool) heldBytes() int64 { return p.out.Load() * chunkSize }

// outbound is a connection's queue of bytes waiting for its writer
// goroutine. Publishers on other connections append whole frames to it
// under mu and then wake the writer, which takes everything queued and
// writes it in one syscall.
type outbound struct {
	mu          sync.Mutex // guards the fields below
	chunks      []*chunk   // queued bytes, in order; the last is being filled
	queued      int        // bytes in chunks
	inFlight    int        // bytes the writer has taken but not yet written
	takenChunks int        // chunks holding inFlight
	closed      bool       // no more frames are accepted
	msgs        int64      // MSG/HMSG frames queued in total
	bytes       int64      // payload bytes of those frames
	line        []byte     // scratch for formatting a MSG line
	// flushing is set while one goroutine has taken bytes and is writing
	// them: the writer, or a reader writing them itself (inline.go).
	// Until it clears it, no other goroutine takes or writes, so frames go
	// out in order and once.
	flushing bool
	// takenMsgs is msgs as of the last take; tookMsgs says that take held
	// MSG frames. Only the taker reads tookMsgs, while flushing (for last
	// activity).
	takenMsgs int64
	tookMsgs  bool
	// direct writes the socket without blocking, for readers that write
	// a short queue themselves; nil (TLS, or not TCP) leaves all writes
	// to the writer. Set before the writer starts.
	direct *directWriter
	// stall is closed when the writer drains below the stall threshold;
	// fast publishers wait on it briefly (see conn.stallIfBehind).
	stall chan struct{}

	pool       *chunkPool
	maxPending int
	wake       chan struct{} // capacity 1: "there is something to write"
	// mqtt marks an MQTT client's queue (mqttout.go): NATS protocol
	// lines (INFO, PING, -ERR, +OK) are dropped, and messages are framed
	// as MQTT PUBLISH packets. Set before the connection is admitted.
	mqtt bool
}

func newOutbound(pool *chunkPool, maxPending int64) *outbound {
	return &outbound{pool: pool, maxPending: int(maxPending), wake: make(chan struct{}, 1)}
}

// signal wakes the writer without blocking.
func (o *outbound) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// write appends p, spilling into new chunks as they fill. Called with mu
// held.
func (o *outbound) write(p []byte) {
	o.queued += len(p)
	for len(p) > 0 {
		var c *chunk
		if n := len(o.chunks); n > 0 && len(o.chunks[n-1].b) < cap(o.chunks[n-1].b) {
			c = o.chunks[n-1]
		} else {
			c = o.pool.get()
			o.chunks = append(o.chunks, c)
		}
		n := copy(c.b[len(c.b):cap(c.b)], p)
		c.b = c.b[:len(c.b)+n]
		p = p[n:]
	}
}

// appendControl queues a protocol line such as PONG or -ERR. It never
// trips the slow-consumer limit: a client's own replies are small and it is
// the client's reading that they wait on.
func (o *outbound) appendControl(line string) {
	o.mu.Lock()
	if !o.closed && !o.mqtt {
		o.line = append(o.line[:0], line...)
		o.write(o.line)
	}
	o.mu.Unlock()
}

// appendLast queues a final protocol line and closes the queue in one
// step, so that nothing another goroutine queues later follows it.
func (o *outbound) appendLast(line string) {
	o.mu.Lock()
	if !o.closed {
		if !o.mqtt {
			o.line = append(o.line[:0], line...)
			o.write(o.line)
		}
		o.closed = true
		if o.stall != nil {
			close(o.stall)
			o.stall = nil
		}
	}
	o.mu.Unlock()
	o.signal()
}

// appendResult says what became of a frame offered to a queue.
type appendResult struct {
	queued    bool          // the frame is queued
	overLimit bool          // refused: the connection is a slow consumer
	stall     chan struct{} // non-nil: the queue is filling up; see stallIfBehind
}

// stallThreshold is the share of max pending past which publishers are
// asked to wait a moment (3/4, as nats-server does).
func (o *outbound) stallThreshold() int { return o.maxPending / 4 * 3 }

// appendMsg formats one MSG or HMSG frame for a subscription and queues
// it. It does not queue when the connection is closed, or when the frame
// would take it over its pending limit (overLimit: the caller must close
// it as a slow consumer).
// see BenchmarkPublishFanout
func (o *outbound) appendMsg(subject, sid, reply []byte, hdr int, msg []byte) appendResult {
	o.mu.Lock()
	defer o.mu.Unlock()
	pending, refused, ok := o.reserve(len(subject) + len(sid) + len(reply) + len(msg) + 32)
	if !ok {
		return refused
	}
	b := frameVerb(o.line[:0], hdr, "MSG ")
	b = append(b, subject...)
	b = append(b, ' ')
	b = append(b, sid...)
	b = append(b, ' ')
	if len(reply) > 0 {
		b = append(b, reply...)
		b = append(b, ' ')
	}
	o.finishFrame(b, hdr, msg)
	if pending > o.stallThreshold() {
		if o.stall == nil {
			o.stall = make(chan struct{})
		}
		return appendResult{queued: true, stall: o.stall}
	}
	return appendResult{queued: true}
}

// reserve checks that a frame of about n bytes may be queued, and
// returns the bytes pending with it; not when the queue is closed, nor
// past the pending limit (refused then says which). Called with mu held.
func (o *outbound) reserve(n int) (pending int, refused appendResult, ok bool) {
	if o.closed {
		return 0, appendResult{}, false
	}
	pending = o.queued + o.inFlight + n
	if pending > o.maxPending {
		return 0, appendResult{overLimit: true}, false
	}
	return pending, appendResult{}, true
}

// frameVerb starts a message frame's control line: HMSG for a message
// with headers (hdr >= 0), else plain ("MSG " or "LMSG ").
func frameVerb(b []byte, hdr int, plain string) []byte {
	if hdr >= 0 {
		return append(b, "HMSG "...)
	}
	return append(b, plain...)
}

// finishFrame ends the control line b of a message frame with its sizes
// and queues it, then msg. Called with mu held.
func (o *outbound) finishFrame(b []byte, hdr int, msg []byte) {
	if hdr >= 0 {
		b = strconv.AppendInt(b, int64(hdr), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(len(msg)), 10)
	b = append(b, "\r\n"...)
	o.line = b
	o.write(b)
	o.write(msg)
	o.write(crlf)
	o.msgs++
	o.bytes += int64(len(msg))
}

var crlf = []byte("\r\n")

// take hands the writer everything queued, appended to into (which it
// may reuse), and makes it the queue's only writer until written. It
// returns an empty list when there is nothing to write, or when a reader
// is writing the queue (it wakes the writer again when done).
func (o *outbound) take(into []*chunk) []*chunk {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.queued == 0 || o.flushing {
		return into[:0]
	}
	taken := o.chunks
	o.chunks = into[:0]
	o.takeLocked(len(taken))
	return taken
}

// takeLocked marks all queued bytes, in n chunks, taken. Called with mu
// held, once the chunks are moved out of o.chunks.
func (o *outbound) takeLocked(n int) {
	o.flushing = true
	o.inFlight, o.queued = o.queued, 0
	o.takenChunks = n
	o.tookMsgs = o.msgs != o.takenMsgs
	o.takenMsgs = o.msgs
}

// written returns the chunks the writer took, now written, to the pool,
// and ends its turn as the queue's writer.
func (o *outbound) written(taken []*chunk) {
	for i, c := range taken {
		o.pool.put(c)
		taken[i] = nil
	}
	o.mu.Lock()
	o.doneLocked()
	o.mu.Unlock()
}

// doneLocked ends a turn as the queue's writer. Called with mu held.
func (o *outbound) doneLocked() {
	o.flushing = false
	o.inFlight, o.takenChunks = 0, 0
	if o.stall != nil && o.queued <= o.stallThreshold() {
		close(o.stall) // the writer is keeping up again: release publishers
		o.stall = nil
	}
}

// drained reports whether the writer may stop: the queue is closed and
// no reader is writing what it took (which may still need the writer).
func (o *outbound) drained() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed && !o.flushing
}

// close stops the queue from accepting frames.
func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	if o.stall != nil {
		close(o.stall)
		o.stall = nil
	}
	o.mu.Unlock()
	o.signal()
}

// counts reports the frames and payload bytes queued so far.
func (o *outbound) counts() (msgs, bytes int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.msgs, o.bytes
}

// heldChunks is the chunks queued or being written: what the queue
// holds of the pool, for the total bound (shed.go).
func (o *outbound) heldChunks() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.chunks) + o.takenChunks
}

// pending is the bytes queued or being written, for /connz.
func (o *outbound) pending() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.queued + o.inFlight
}
