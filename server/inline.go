package server

import (
	"slices"
	"time"
)

// A reader writes short queues itself. With one message in flight (a
// request, then its reply) there is nothing to batch, and handing each
// frame to the target's writer goroutine costs a wake-up, a context
// switch and a write; about a third of the server's CPU on request-reply.
// So when a read is processed, a reader that queued at most inlineMax
// bytes for a connection whose writer is idle writes them to the socket
// itself, without blocking: what the socket does not take at once goes
// back to the front of the queue, and the writer is woken for it as
// before. A slow subscriber therefore costs the reader one failed
// non-blocking write at most, then the writer (with its deadline) owns
// the socket until it is drained again. TLS connections have no
// directWriter and always use their writer.
//
// The queue's flushing flag (outbound.go) makes the reader and the writer
// take turns: whoever sets it took the queue and alone writes the socket;
// whoever clears it wakes the writer if anything was queued meanwhile or
// the queue was closed, so no frame waits for a wake-up that was spent
// while the socket was taken.

// inlineMax is the most a reader writes for another connection. Bigger
// queues are a burst the writer batches in one writev while the reader
// parses on. 16 KiB takes a 4 KiB request inline too
// (BenchmarkRequestReplyTCP/size=4096: 37% less per round trip than
// with 4 KiB), while a busy read of small messages (the suite's pub→sub
// and fan-out rows, 64 KiB reads) queues more and stays on the writers,
// unchanged in CPU and throughput.
const inlineMax = 16 * 1024

// flushOrWake is how a reader hands over what it queued for c once the
// read is processed: it writes it itself when it is short and the socket
// is free, else it wakes c's writer.
// see BenchmarkRequestReplyTCP
func (c *conn) flushOrWake() {
	if c.out.flushDirect() {
		c.lastActivity.Store(time.Now().UnixNano())
	}
}

// flushDirect writes what is queued from the calling goroutine without
// blocking when there is little and nobody is writing, leaves the rest
// to the writer and wakes it. It reports whether MSG frames went out.
func (o *outbound) flushDirect() (wroteMsgs bool) {
	o.mu.Lock()
	d := o.direct
	if d == nil || o.flushing || o.closed || o.queued == 0 || o.queued > inlineMax {
		o.mu.Unlock()
		o.signal()
		return false
	}
	d.taken, o.chunks = o.chunks, d.taken[:0] // as take does: a swap, no copy
	o.takeLocked(len(d.taken))
	msgs := o.tookMsgs
	o.mu.Unlock()

	n := d.write(d.taken)
	done := cutWritten(d.taken, n)
	rest := d.taken[done:]
	for i, c := range d.taken[:done] {
		o.pool.put(c)
		d.taken[i] = nil
	}
	o.mu.Lock()
	for _, c := range rest {
		o.queued += len(c.b)
	}
	o.chunks = slices.Insert(o.chunks, 0, rest...)
	clear(rest)
	o.doneLocked() // d is the next taker's from here
	again := o.queued > 0 || o.closed
	o.mu.Unlock()
	if again {
		o.signal()
	}
	return msgs && n > 0
}

// cutWritten removes the first n bytes of chunks, which were written: it
// returns how many chunks went out whole, and moves what is left of the
// next one to its start (keeping its capacity, which the pool relies on).
func cutWritten(chunks []*chunk, n int) (whole int) {
	for _, c := range chunks {
		if n < len(c.b) {
			if n > 0 {
				c.b = c.b[:copy(c.b, c.b[n:])]
			}
			return whole
		}
		n -= len(c.b)
		whole++
	}
	return whole
}
