package server

import (
	"strconv"
	"sync"
)

// outbound is a connection's queue of bytes waiting for its writer
// goroutine. Publishers on other connections append whole frames to it
// under mu and then wake the writer, which takes everything queued and
// writes it in one syscall. Two buffers swap roles so steady traffic
// allocates nothing.
type outbound struct {
	mu       sync.Mutex // guards the fields below
	buf      []byte     // frames queued since the writer last took them
	spare    []byte     // the writer's previous buffer, empty, for reuse
	inFlight int        // bytes the writer has taken but not yet written
	closed   bool       // no more frames are accepted
	msgs     int64      // MSG/HMSG frames queued in total
	bytes    int64      // payload bytes of those frames

	maxPending int
	wake       chan struct{} // capacity 1: "there is something to write"
}

// maxSpareBuffer is the largest written buffer kept for reuse. Busy
// connections keep theirs, so steady traffic allocates nothing; a larger
// one, left by a burst, goes back to the garbage collector.
const maxSpareBuffer = 8 << 20

func newOutbound(maxPending int64) *outbound {
	return &outbound{maxPending: int(maxPending), wake: make(chan struct{}, 1)}
}

// signal wakes the writer without blocking.
func (o *outbound) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// appendControl queues a protocol line such as PONG or -ERR. It never
// trips the slow-consumer limit: a client's own replies are small and it is
// the client's reading that they wait on.
func (o *outbound) appendControl(line string) {
	o.mu.Lock()
	if !o.closed {
		o.buf = append(o.buf, line...)
	}
	o.mu.Unlock()
}

// appendMsg formats one MSG or HMSG frame for a subscription and queues
// it. It returns false without queuing when the connection is closed or
// when the frame would take it over its pending limit, in which case
// overLimit is true and the caller must close it as a slow consumer.
// see BenchmarkFanout
func (o *outbound) appendMsg(subject, sid, reply []byte, hdr int, msg []byte) (queued, overLimit bool) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false, false
	}
	frame := len(subject) + len(sid) + len(reply) + len(msg) + 32
	if len(o.buf)+o.inFlight+frame > o.maxPending {
		o.mu.Unlock()
		return false, true
	}
	b := o.buf
	if hdr >= 0 {
		b = append(b, "HMSG "...)
	} else {
		b = append(b, "MSG "...)
	}
	b = append(b, subject...)
	b = append(b, ' ')
	b = append(b, sid...)
	b = append(b, ' ')
	if len(reply) > 0 {
		b = append(b, reply...)
		b = append(b, ' ')
	}
	if hdr >= 0 {
		b = strconv.AppendInt(b, int64(hdr), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(len(msg)), 10)
	b = append(b, "\r\n"...)
	b = append(b, msg...)
	b = append(b, "\r\n"...)
	o.buf = b
	o.msgs++
	o.bytes += int64(len(msg))
	o.mu.Unlock()
	return true, false
}

// take hands the writer everything queued. It returns nil when there is
// nothing to write.
func (o *outbound) take() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) == 0 {
		return nil
	}
	b := o.buf
	o.buf, o.spare = o.spare[:0], nil
	o.inFlight = len(b)
	return b
}

// written returns the buffer the writer took, now written, for reuse.
func (o *outbound) written(b []byte) {
	o.mu.Lock()
	o.inFlight = 0
	if cap(b) <= maxSpareBuffer { // let a burst's huge buffer go rather than pin it
		o.spare = b[:0]
	}
	o.mu.Unlock()
}

// close stops the queue from accepting frames.
func (o *outbound) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
}

func (o *outbound) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

// counts reports the frames and payload bytes queued so far.
func (o *outbound) counts() (msgs, bytes int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.msgs, o.bytes
}
