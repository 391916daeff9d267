package server

import (
	"strconv"
	"strings"
	"sync"

	"github.com/bus-dev/bus/subjects"
)

// Interest across leaf links, both ways.
//
// This server's: every subscription in the client subject space (clients'
// and the server's own, such as a stream's subjects or JetStream's acks)
// counts; each link's hub is told LS+ when a subject gains its first plain
// subscription and LS- when it loses its last, and for a queue group LS+
// with the member count (its weight) whenever that changes. Nothing of the
// system account crosses, nor what the link's rights keep in (among them
// bus's own $BUS and the $SYS subjects, leafDenies).
//
// The hub's: each LS+ becomes a subscription of the link's conn marked
// remote, in the same trie, so the router finds the hub beside local
// subscribers (leafroute.go); LS- removes it, and so does the link's end.

// leafInterest is this server's interest as the links announce it. A
// nil *leafInterest (no remotes configured) ignores everything.
type leafInterest struct {
	lds string // this server's loop-detection subject, "$LDS.<id>"

	mu     sync.Mutex // guards the fields below
	plain  map[string]int
	queues map[queueKey]int
	links  []*conn // joined links, told of every change
}

type queueKey struct{ subject, queue string }

func newLeafInterest(serverID string) *leafInterest {
	return &leafInterest{
		lds:    "$LDS." + serverID,
		plain:  map[string]int{},
		queues: map[queueKey]int{},
	}
}

// interestChanged is called after sub was added to (delta 1) or removed
// from (delta -1) trie.
func (s *Server) interestChanged(trie *subjects.Trie[*subscription], sub *subscription, delta int) {
	if s.leafInterest == nil || trie != s.subs || sub.remote {
		return
	}
	s.leafInterest.changed(sub.subject, sub.queue, delta)
}

// announced reports whether a local subscription on subject is told to
// hubs at all: the system account's and the servers' own $SYS
// subscriptions never are.
func announced(subject string) bool { return !strings.HasPrefix(subject, "$SYS.") }

func (li *leafInterest) changed(subject, queue string, delta int) {
	if !announced(subject) {
		return
	}
	li.mu.Lock()
	defer li.mu.Unlock()
	if queue == "" {
		before := li.plain[subject]
		after := before + delta
		if after <= 0 {
			delete(li.plain, subject)
		} else {
			li.plain[subject] = after
		}
		switch {
		case before == 0 && after > 0:
			li.tell(subject, "", "LS+ "+subject+"\r\n")
		case before > 0 && after <= 0:
			li.tell(subject, "", "LS- "+subject+"\r\n")
		}
		return
	}
	k := queueKey{subject, queue}
	after := li.queues[k] + delta
	if after <= 0 {
		delete(li.queues, k)
		li.tell(subject, queue, "LS- "+subject+" "+queue+"\r\n")
		return
	}
	li.queues[k] = after
	li.tell(subject, queue, lsQueue(subject, queue, after))
}

func lsQueue(subject, queue string, weight int) string {
	return "LS+ " + subject + " " + queue + " " + strconv.Itoa(weight) + "\r\n"
}

// tell queues line on every joined link that announces subject. Called
// with mu held.
func (li *leafInterest) tell(subject, queue, line string) {
	for _, c := range li.links {
		if c.leaf.mayAnnounce(subject, queue) {
			c.out.appendControl(line)
			c.out.signal()
		}
	}
}

// join queues, on a link that just sent CONNECT, LS+ for all of this
// server's interest and its loop-detection subject, then keeps it told.
func (li *leafInterest) join(c *conn) {
	li.mu.Lock()
	defer li.mu.Unlock()
	var b strings.Builder
	b.WriteString("LS+ " + li.lds + "\r\n")
	for subject := range li.plain {
		if c.leaf.mayAnnounce(subject, "") {
			b.WriteString("LS+ " + subject + "\r\n")
		}
	}
	for k, n := range li.queues {
		if c.leaf.mayAnnounce(k.subject, k.queue) {
			b.WriteString(lsQueue(k.subject, k.queue, n))
		}
	}
	c.out.appendControl(b.String())
	li.links = append(li.links, c)
}

// leave stops telling a link that closed.
func (li *leafInterest) leave(c *conn) {
	li.mu.Lock()
	defer li.mu.Unlock()
	for i, x := range li.links {
		if x == c {
			li.links = append(li.links[:i:i], li.links[i+1:]...)
			return
		}
	}
}

// processLeafSub takes the hub's LS+: its interest becomes a remote
// subscription of this link, unless it is this server's own loop
// detection subject coming back, which means a loop: the link is cut and
// rests, as the reference does.
func (c *conn) processLeafSub(o *op) {
	subject := string(o.subject)
	if subject == c.srv.leafInterest.lds {
		text := "Loop detected for leafnode account=\"" + globalAccount + "\". Delaying attempt to reconnect for " + leafLoopDelay.String()
		c.leaf.link.mu.Lock()
		c.leaf.link.loop = true
		c.leaf.link.mu.Unlock()
		c.log.Error("leafnode loop detected", "subject", subject)
		c.closeWithErr(text, "Loop Detected")
		return
	}
	if !subjects.ValidSubjectBytes(o.subject) {
		c.log.Warn("leafnode: hub sent an invalid subject", "subject", subject)
		return
	}
	if !c.leaf.perms.canPublish(subject) && subjects.ValidLiteral(subject) {
		return // nothing on it may go to the hub
	}
	key := leafSubKey(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs == nil {
		return
	}
	if _, ok := c.subs[key]; ok {
		return // a queue group's new weight: bus picks among links evenly
	}
	sub := &subscription{conn: c, subject: subject, queue: string(o.queue), remote: true, sid: []byte(key)}
	if err := c.trie.Insert(sub.subject, sub.queue, sub); err != nil {
		return
	}
	c.subs[key] = sub
	c.srv.internalSubs.Add(1)
	c.srv.watchers.changed(sub.subject)
}

// processLeafUnsub takes the hub's LS-.
func (c *conn) processLeafUnsub(o *op) {
	key := leafSubKey(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subs[key]
	if sub == nil {
		return
	}
	delete(c.subs, key)
	if c.trie.Remove(sub.subject, sub.queue, sub) == nil {
		c.srv.internalSubs.Add(-1)
	}
	c.srv.watchers.changed(sub.subject)
}

// leafSubKey is how a link's conn keys the hub's interest of an LS+ or
// LS-: the subject, and the queue group after a blank.
func leafSubKey(o *op) string {
	if len(o.queue) > 0 {
		return string(o.subject) + " " + string(o.queue)
	}
	return string(o.subject)
}
