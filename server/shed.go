package server

import "time"

// The total bound on outbound queues (Options.MaxPendingTotal): each
// connection is bounded by MaxPending, but many slow subscribers, each
// under its own bound, can still hold more memory together than the
// machine has. When the chunks every queue holds together pass the total,
// the shedder closes the connection with the longest queue as a slow
// consumer, then the next, until the total is under the bound again. A
// client that reads keeps a short queue and is never the one closed.

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

// shedLongestQueue closes the connection with the most bytes queued and
// reports whether there was one.
func (s *Server) shedLongestQueue() bool {
	s.mu.Lock()
	var longest *conn
	most := 0
	for _, c := range s.conns {
		if n := c.out.pending(); n > most && !c.closing.Load() {
			longest, most = c, n
		}
	}
	s.mu.Unlock()
	if longest == nil {
		return false
	}
	s.log.Warn("slow consumer closed: outbound queues over max_pending_total",
		"cid", longest.id, "pending", most, "total", s.chunks.heldBytes(), "max_pending_total", s.opts.MaxPendingTotal)
	longest.slowConsumer()
	// What it queued goes back now; what its writer holds, once the closed
	// socket fails the write. Wait for that (briefly) before measuring
	// again, or the next longest would be closed for bytes already freed.
	longest.out.release()
	for i := 0; i < 200 && longest.out.pending() > 0; i++ {
		time.Sleep(time.Millisecond)
	}
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
