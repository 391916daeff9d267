package server

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"
)

// Lame-duck defaults, as in the reference.
const (
	// DefaultLameDuckDuration is the time over which lame-duck mode
	// spreads the closing of the clients.
	DefaultLameDuckDuration = 2 * time.Minute
	// DefaultLameDuckGracePeriod is the wait between telling the clients
	// and closing the first, so that servers entering lame-duck mode
	// together do not send their clients to each other.
	DefaultLameDuckGracePeriod = 10 * time.Second
	// maxLameDuckInterval caps the pause between two closes, as the
	// reference's: ten clients are not spread over two minutes.
	maxLameDuckInterval = time.Second
)

// LameDuck drains the server, as nats-server's lame-duck mode: it stops
// accepting clients, closes JetStream cleanly (stored data is flushed and
// waiting pulls are told), tells every connected client with an INFO
// carrying "ldm":true (nats.go calls its LameDuckModeHandler and
// reconnects elsewhere), waits LameDuckGracePeriod, closes the clients
// one by one spread over the rest of LameDuckDuration, and shuts down.
// When ctx ends first, or Shutdown is called meanwhile, what is left is
// closed at once. It returns what Shutdown returns; a second call, or a
// call after Shutdown, returns nil at once.
func (s *Server) LameDuck(ctx context.Context) error {
	s.mu.Lock()
	if s.shutdown || s.lameDuck || s.ln == nil {
		s.mu.Unlock()
		return nil
	}
	s.lameDuck = true
	ln := s.ln
	s.mu.Unlock()
	live := s.liveOpts()
	s.log.Info("entering lame duck mode, stop accepting new clients",
		"duration", live.LameDuckDuration, "grace_period", live.LameDuckGracePeriod)
	_ = ln.Close()
	s.stopWebSocket()
	s.stopJetStream()

	conns := s.connList()
	rand.Shuffle(len(conns), func(i, j int) { conns[i], conns[j] = conns[j], conns[i] })
	for _, c := range conns {
		if c.asyncInfo.Load() {
			c.out.appendControl(s.lameDuckInfo(c))
			c.out.signal()
		}
	}

	if len(conns) > 0 && s.lameDuckWait(ctx, live.LameDuckGracePeriod) {
		s.log.Info("closing existing clients", "clients", len(conns))
		pause := lameDuckInterval(live.LameDuckDuration-live.LameDuckGracePeriod, len(conns))
		for i, c := range conns {
			c.close("Server Shutdown", true)
			if i == len(conns)-1 {
				break
			}
			// At least half the interval, as the reference.
			d := pause/2 + rand.N(pause/2+1)
			if !s.lameDuckWait(ctx, d) {
				break
			}
		}
	}
	return s.Shutdown(ctx)
}

// lameDuckInterval is the pause between two closes: what spreads n
// closes over d, at most maxLameDuckInterval.
func lameDuckInterval(d time.Duration, n int) time.Duration {
	if d <= 0 {
		d = time.Second // the reference's floor
	}
	if n <= 0 {
		return 0
	}
	return min(d/time.Duration(n), maxLameDuckInterval)
}

// lameDuckWait waits d; false when ctx ended or Shutdown began first.
func (s *Server) lameDuckWait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-s.quit:
	}
	return false
}

// lameDuckInfo is the INFO that tells a client the server is going away:
// its connect INFO with "ldm":true.
func (s *Server) lameDuckInfo(c *conn) string {
	info := s.infoFields(c)
	info.LameDuckMode = true
	js, _ := json.Marshal(info) // a struct of plain fields cannot fail
	return "INFO " + string(js) + " \r\n"
}

// InLameDuckMode reports whether LameDuck has begun.
func (s *Server) InLameDuckMode() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lameDuck
}
