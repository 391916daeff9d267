package server

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// capturePull queues a MSG.NEXT request (client reader goroutine).
func (c *consumer) capturePull(_, reply []byte, hdr int, msg []byte) bool {
	if len(reply) == 0 {
		return true
	}
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	c.queuePull(string(reply), body)
	return true
}

// queuePull adds a pull request answering to inbox, or answers it with
// the status that refuses it.
func (c *consumer) queuePull(inbox string, body []byte) {
	req, status := parsePullRequest(body)
	if c.push != nil {
		status = "409 Consumer is push based"
	}
	if status != "" {
		c.st.js.srv.sendInternal(inbox, "", statusHeader(status), nil)
		return
	}
	req.reply = inbox
	req.lastSent = time.Now()
	c.mu.Lock()
	c.lastActive = req.lastSent
	if len(c.waiting) >= c.cfg.MaxWaiting {
		c.mu.Unlock()
		c.st.js.srv.sendInternal(inbox, "", statusHeader("409 Exceeded MaxWaiting"), nil)
		return
	}
	c.waiting = append(c.waiting, req)
	c.mu.Unlock()
	c.signal()
}

// parsePullRequest reads a pull request body: empty (batch 1), a bare
// number (the batch), or JSON. A non-empty status is the error to send.
func parsePullRequest(body []byte) (*pullRequest, string) {
	req := &pullRequest{batch: 1}
	text := strings.TrimSpace(string(body))
	if text == "" {
		return req, ""
	}
	if n, err := strconv.Atoi(text); err == nil {
		req.batch = max(n, 1)
		return req, ""
	}
	var r struct {
		Batch     int   `json:"batch"`
		Expires   int64 `json:"expires"`
		NoWait    bool  `json:"no_wait"`
		MaxBytes  int   `json:"max_bytes"`
		Heartbeat int64 `json:"idle_heartbeat"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, "400 Bad Request"
	}
	if r.Heartbeat > 0 && r.Expires > 0 && 2*r.Heartbeat > r.Expires {
		return nil, "400 Bad Request - heartbeat value too large"
	}
	req.batch = max(r.Batch, 1)
	req.noWait = r.NoWait
	req.maxBytes, req.hasBudget = r.MaxBytes, r.MaxBytes > 0
	req.heartbeat = time.Duration(r.Heartbeat)
	if r.Expires > 0 {
		req.expires = time.Now().Add(time.Duration(r.Expires))
	}
	return req, ""
}

// expireRequests ends pulls past their expiry with 408, drops those whose
// requester went away, and sends idle heartbeats.
func (c *consumer) expireRequests(now time.Time) {
	srv := c.st.js.srv
	c.mu.Lock()
	kept := c.waiting[:0]
	var expired, beats []*pullRequest
	for _, r := range c.waiting {
		switch {
		case !srv.hasInterest(r.reply):
		case !r.expires.IsZero() && !now.Before(r.expires):
			expired = append(expired, r)
		default:
			if r.heartbeat > 0 && now.Sub(r.lastSent) >= r.heartbeat {
				r.lastSent = now
				beats = append(beats, r)
			}
			kept = append(kept, r)
		}
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
	c.mu.Unlock()
	for _, r := range expired {
		srv.sendInternal(r.reply, "", pendingStatus("408 Request Timeout", r), nil)
	}
	if len(beats) > 0 {
		info := c.state.Info()
		hb := statusHeader("100 Idle Heartbeat",
			"Nats-Last-Consumer", strconv.FormatUint(info.Delivered.Consumer, 10),
			"Nats-Last-Stream", strconv.FormatUint(info.Delivered.Stream, 10))
		for _, r := range beats {
			srv.sendInternal(r.reply, "", hb, nil)
		}
	}
}

func pendingStatus(status string, r *pullRequest) []byte {
	return statusHeader(status,
		"Nats-Pending-Messages", strconv.Itoa(r.batch),
		"Nats-Pending-Bytes", strconv.Itoa(r.maxBytes))
}

// finishNoWait answers no_wait pulls that could not be filled with 404.
func (c *consumer) finishNoWait() {
	c.mu.Lock()
	kept := c.waiting[:0]
	var done []*pullRequest
	for _, r := range c.waiting {
		if r.noWait {
			done = append(done, r)
		} else {
			kept = append(kept, r)
		}
	}
	clear(c.waiting[len(kept):])
	c.waiting = kept
	c.mu.Unlock()
	for _, r := range done {
		c.st.js.srv.sendInternal(r.reply, "", statusHeader("404 No Messages"), nil)
	}
}

// firstWaiting returns the oldest waiting pull, or nil.
func (c *consumer) firstWaiting() *pullRequest {
	if c.push != nil {
		return c.pushRequest()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiting) == 0 {
		return nil
	}
	return c.waiting[0]
}

// dropFirst removes the oldest pull once it is complete.
func (c *consumer) dropFirst() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiting) > 0 {
		c.waiting[0] = nil
		c.waiting = c.waiting[1:]
	}
}
