package server

import (
	"strconv"
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/jetlog"
)

// Flow control: after this many bytes a push consumer asks its
// subscriber to confirm it is keeping up, and pauses until it does.
const flowControlWindow = 2 << 20

// pushBatch is how many messages one round hands a push subscriber
// before the consumer goroutine looks at acks and timers again.
const pushBatch = 256

// pushRequest returns the push consumer's standing request when someone
// listens on the deliver subject and flow control allows, else nil.
func (c *consumer) pushRequest() *pullRequest {
	c.mu.Lock()
	paused := c.fcPending || c.closed
	c.mu.Unlock()
	if paused || !c.st.js.srv.hasInterest(c.push.reply) {
		return nil
	}
	c.push.batch = pushBatch
	return c.push
}

// flowControl counts delivered bytes and, past the window, sends the
// flow-control request that pauses delivery until it is answered.
func (c *consumer) flowControl(sent []jetlog.Msg) {
	if !c.cfg.FlowControl {
		return
	}
	c.mu.Lock()
	for _, m := range sent {
		c.fcBytes += len(m.Subject) + len(m.Header) + len(m.Data)
	}
	ask := !c.fcPending && c.fcBytes >= flowControlWindow
	if ask {
		c.fcPending = true
	}
	c.mu.Unlock()
	if ask {
		reply := "$JS.FC." + c.st.name + "." + c.name + "." + nuid.Next()[:4]
		c.st.js.srv.sendInternal(c.push.reply, reply, statusHeader("100 FlowControl Request"), nil)
	}
}

// captureFlowControl is the subscriber's answer to a flow-control
// request: delivery resumes.
func (c *consumer) captureFlowControl(_, _ []byte, _ int, _ []byte) bool {
	c.mu.Lock()
	c.fcPending, c.fcBytes = false, 0
	c.mu.Unlock()
	c.signal()
	return true
}

// pushHeartbeat sends an idle heartbeat to the deliver subject when
// nothing was delivered for the heartbeat interval.
func (c *consumer) pushHeartbeat(now time.Time) {
	p := c.push
	if p == nil || p.heartbeat <= 0 || now.Sub(p.lastSent) < p.heartbeat {
		return
	}
	srv := c.st.js.srv
	if !srv.hasInterest(p.reply) {
		return
	}
	p.lastSent = now
	info := c.state.Info()
	srv.sendInternal(p.reply, "", statusHeader("100 Idle Heartbeat",
		"Nats-Last-Consumer", strconv.FormatUint(info.Delivered.Consumer, 10),
		"Nats-Last-Stream", strconv.FormatUint(info.Delivered.Stream, 10)), nil)
}
