package server

// The total bound on outbound queues (Options.MaxPendingTotal): each
// connection is bounded by MaxPending, but many slow subscribers, each
// under its own bound, can still hold more memory together than the
// machine has. When the chunks the queues of open connections hold
// together pass the total, the shedder closes the connection with the
// longest queue as a slow consumer, then the next, until the total is
// under the bound again. A client that reads keeps a short queue and is
// never the one closed.

// shedder runs until the server stops, woken by the chunk pool.
func (s *Server) shedder() {
	defer s.wg.Done()
	for {
		select {
		case <-s.chunks.shed:
		case <-s.quit:
			return
		}
		for s.chunks.over() {
			if !s.shedLongestQueue() {
				break
			}
		}
	}
}

// shedLongestQueue closes the open connection with the longest queue
// when the queues of open connections together hold more than the
// bound, and reports whether it closed one.
//
// Only open connections count. A closed one (by the shedder, its own
// max_pending or a failed write) still holds the chunks its writer took
// until that write fails on the closed socket, which under load takes a
// while; counting those would close the next longest queue, in the end
// one that reads, for memory already on its way back. While they return,
// the pool stays over and wakes the shedder on each chunk taken, which
// then only measures.
func (s *Server) shedLongestQueue() bool {
	s.mu.Lock()
	var longest *conn
	most, live := 0, int64(0)
	for _, c := range s.conns {
		if c.closing.Load() {
			continue
		}
		n := c.out.heldChunks()
		live += int64(n)
		if n > most {
			longest, most = c, n
		}
	}
	s.mu.Unlock()
	if longest == nil || live <= s.chunks.limit {
		return false
	}
	s.log.Warn("slow consumer closed: outbound queues over max_pending_total",
		"cid", longest.id, "pending", longest.out.pending(), "total", live*chunkSize, "max_pending_total", s.opts.MaxPendingTotal)
	longest.slowConsumer()
	// What it queued goes back now; what its writer holds, once the
	// closed socket fails the write.
	longest.out.release()
	return true
}

// release returns the chunks still queued when the writer stops (the
// connection failed before they could be written), so that the total
// counts only what queues hold.
func (o *outbound) release() {
	o.mu.Lock()
	chunks := o.chunks
	o.chunks, o.queued, o.closed = nil, 0, true
	o.mu.Unlock()
	for _, c := range chunks {
		o.pool.put(c)
	}
}
