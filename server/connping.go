package server

import "time"

// The keepalive: every connection has one timer that sends a PING after
// ping_interval without traffic and closes the connection as stale after
// ping_max unanswered ones, as the reference does (tests/limits_test.go:
// TestStaleConnectionIsDropped, TestAnsweredPingsKeepConnectionAlive).

// rttMeasureInterval is how often a PING goes out even to a busy client,
// as the reference measures the round trip.
const rttMeasureInterval = time.Hour

// resetPingTimer (re)arms the keepalive timer to fire after d.
func (c *conn) resetPingTimer(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil { // closed
		return
	}
	if c.pingTimer != nil {
		c.pingTimer.Stop()
	}
	c.pingTimer = time.AfterFunc(d, c.pingTimerFired)
}

// pingTimerFired sends a keepalive PING, or drops the connection as stale
// when too many are unanswered.
func (c *conn) pingTimerFired() {
	c.mu.Lock()
	if c.subs == nil {
		c.mu.Unlock()
		return
	}
	// A client heard from within the interval needs no PING, unless the
	// round trip has not been measured for an hour (the reference's
	// rule; its first PING always goes out).
	now := time.Now()
	live := c.srv.liveOpts()
	interval := live.PingInterval
	if c.ws && live.WebSocket.PingInterval > 0 {
		interval = live.WebSocket.PingInterval
	}
	measured := !c.pingSentAt.IsZero() && now.Sub(c.pingSentAt) < rttMeasureInterval
	if measured && now.Sub(time.Unix(0, c.lastIn.Load())) < interval {
		c.pingTimer = time.AfterFunc(interval, c.pingTimerFired)
		c.mu.Unlock()
		return
	}
	if c.pingsOut+1 > live.MaxPingsOut {
		c.mu.Unlock()
		c.closeWithErr(errStaleConnection.text, "Stale Connection")
		return
	}
	c.pingsOut++
	c.pingSentAt = now
	c.pingTimer = time.AfterFunc(interval, c.pingTimerFired)
	c.mu.Unlock()
	if c.srv.tracer.Load() != nil {
		c.traceOut("PING")
	}
	c.out.appendControl("PING\r\n")
	c.out.signal()
}
