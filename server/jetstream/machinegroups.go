package jetstream

import (
	"strings"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Message groups (x_bus_group_by): a consumer whose messages carry a
// group key never has two unacknowledged messages of one group out at
// once, and delivers each group in store order, while the other groups
// keep flowing. A message of a busy group (one with a message pending:
// delivered and not acked or terminated, waiting for redelivery
// included) is held back when the machine reaches it: next moves past
// it, and it is remembered in its group's held list. When the pending
// message is acked, terminated or dead-lettered, the group's oldest held
// message becomes ready and is delivered before any new message. A
// message without a key (no such header, too few subject tokens) is a
// group of its own: never held back.
//
// # Restarts and the ledger
//
// Held-back messages lie below the ledger's Delivered and above its ack
// floor, unacked and not pending: from the pending set alone they look
// acked. So a group with held-back messages always has an entry in the
// ledger below them: its pending message, or, once that is acked, a
// tombstone: the acked message kept pending with a deadline past
// tombstoneFrom, never redelivered, until the group's next message goes
// out (that delivery and the tombstone's ack are one ledger step). From
// that a restart rebuilds the groups (rebuildGroups): scanning the
// stream from the ack floor to Delivered, a message not pending whose
// group has a pending or tombstoned message before it is held back;
// one whose group has none was acked. The ack floor stays below every
// held-back message, and interest retention keeps them (doneWith).
// A tombstone counts in num_ack_pending but not against max_ack_pending.
//
// # Bounds
//
// Memory is per busy group (its key and a few words) and per held-back
// seq (about 40 bytes: a slice slot and a map entry). Held-back
// messages are at most maxHeldBack per consumer: past that the machine
// stops reading new messages until a group frees up (only then is
// there head-of-line blocking across groups). Each stored message is
// read once by the held-back scan, so a gather costs what it delivers
// plus what it holds back. A restart reads the stream from the ack
// floor to Delivered once.
type groups struct {
	by groupBy

	// mu guards the fields below. Only the machine's goroutine changes
	// them; doneWith reads seqs and held lists from others (holds).
	mu    sync.Mutex
	byKey map[string]*group // busy groups
	seqs  map[uint64]*group // pending, tombstoned and held-back seqs of busy groups
	ready seqHeap           // first held-back seq of each group that has nothing pending
	held  int               // held-back messages in all
	tombs int               // tombstones in the ledger
}

// group is one busy group.
type group struct {
	key      string
	inflight int      // pending deliveries (one; more only after a change of mind in the ledger)
	tomb     uint64   // the tombstoned seq, or 0
	held     []uint64 // held-back seqs in store order
}

func (g *group) busy() bool { return g.inflight > 0 || g.tomb != 0 || len(g.held) > 0 }

// maxHeldBack bounds the held-back messages of one consumer.
const maxHeldBack = 1 << 16

// A tombstone's pending deadline is set to tombstoneAt and recognised
// from tombstoneFrom on (unix ns: years 2189 and 2152), far above any
// deadline maxGroupWait allows, with room for the ledger's clock to
// differ from the machine's.
const (
	tombstoneAt   int64 = 1<<62 + 1<<61
	tombstoneFrom int64 = 1<<62 + 1<<60
)

func isTombstone(p *jetlog.Pending) bool { return p.Deadline >= tombstoneFrom }

func newGroups(by groupBy) *groups {
	return &groups{by: by, byKey: map[string]*group{}, seqs: map[uint64]*group{}}
}

// find returns msg's busy group, nil if it has none; keyed is false for
// a message without a key. It allocates nothing.
func (t *groups) find(msg jetlog.Msg) (g *group, keyed bool) {
	if t.by.Header != "" {
		k := t.by.headerKey(msg)
		if k == nil {
			return nil, false
		}
		return t.byKey[string(k)], true
	}
	k, ok := t.by.tokenKey(msg)
	if !ok {
		return nil, false
	}
	return t.byKey[k], true
}

// add returns msg's group, making it busy; nil for a message without a
// key. Callers hold t.mu.
func (t *groups) add(msg jetlog.Msg) *group {
	g, keyed := t.find(msg)
	if g != nil || !keyed {
		return g
	}
	var key string
	if t.by.Header != "" {
		key = string(t.by.headerKey(msg))
	} else {
		k, _ := t.by.tokenKey(msg)
		key = strings.Clone(k) // not keeping the whole subject alive
	}
	g = &group{key: key}
	t.byKey[key] = g
	return g
}

// dropIfIdle forgets g once nothing of it is pending or held back.
// Callers hold t.mu.
func (t *groups) dropIfIdle(g *group) {
	if !g.busy() {
		delete(t.byKey, g.key)
	}
}

// numHeld counts held-back messages; 0 without groups.
func (t *groups) numHeld() int {
	if t == nil {
		return 0
	}
	return t.held
}

// numTombs counts tombstones; 0 without groups.
func (t *groups) numTombs() int {
	if t == nil {
		return 0
	}
	return t.tombs
}

// holds reports whether seq is held back, for interest retention, which
// asks from other goroutines. Safe for concurrent use; false without
// groups.
func (t *groups) holds(seq uint64) bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.seqs[seq]
	return g != nil && len(g.held) > 0 && seq >= g.held[0]
}

// Outcomes of admit.
const (
	admitted = iota // the message may go out
	heldBack        // its group is busy: held back
	heldFull        // its group is busy and maxHeldBack reached: stop reading
)

// admit decides on a message reached for its first delivery (a new or
// a last_per_subject start message): it holds it back if its group is
// busy, or else claims the group for it, so that the rest of the gather
// holds back the group's later messages (putBack undoes the claim).
// ignoreBound holds back even past maxHeldBack.
func (m *machine) admit(msg jetlog.Msg, ignoreBound bool) int {
	t := m.groups
	g, keyed := t.find(msg)
	if !keyed {
		return admitted
	}
	if g != nil && t.held >= maxHeldBack && !ignoreBound {
		return heldFull
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if g == nil {
		g = t.add(msg)
		g.inflight++
		t.seqs[msg.Seq] = g
		return admitted
	}
	g.held = append(g.held, msg.Seq)
	t.seqs[msg.Seq] = g
	t.held++
	return heldBack
}

// unclaim undoes admit's claim for a message that was not sent. If its
// group held back later messages meanwhile, the message goes first among
// them (and is ready) and unclaim reports true: it is not to be read
// again as a new message.
func (m *machine) unclaim(seq uint64) bool {
	t := m.groups
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.seqs[seq]
	if g == nil {
		return false // no key
	}
	g.inflight--
	if len(g.held) == 0 {
		delete(t.seqs, seq)
		t.dropIfIdle(g)
		return false
	}
	g.held = append([]uint64{seq}, g.held...)
	t.held++
	if g.inflight == 0 {
		t.ready.push(seq)
	}
	return true
}

// nextReady takes the oldest held-back message whose group has nothing
// pending; ok is false when there is none. One gone from the stream
// meanwhile is skipped.
func (m *machine) nextReady() (jetlog.Msg, bool) {
	t := m.groups
	for t.ready.Len() > 0 {
		seq := t.ready.pop()
		g := t.seqs[seq]
		if g == nil || g.inflight > 0 || len(g.held) == 0 || g.held[0] != seq {
			continue // stale
		}
		msg, err := m.src.Get(seq)
		if err == nil {
			g.inflight++ // claimed, as by admit
			return msg, true
		}
		m.dropHead(g)
	}
	return jetlog.Msg{}, false
}

// unready puts back a ready message that was not sent.
func (m *machine) unready(seq uint64) {
	m.groups.seqs[seq].inflight--
	m.groups.ready.push(seq)
}

// dropHead forgets g's first held-back message, gone from the stream:
// the next becomes ready, or with none left the tombstone is acked.
func (m *machine) dropHead(g *group) {
	t := m.groups
	t.mu.Lock()
	delete(t.seqs, g.held[0])
	g.held = shift(g.held)
	t.held--
	t.mu.Unlock()
	if len(g.held) > 0 {
		t.ready.push(g.held[0])
		return
	}
	if tomb := g.tomb; tomb != 0 {
		err := m.ledger.Update(func(s *jetlog.ConsumerState) { s.Ack(tomb) }, false)
		if err != nil {
			m.act.err = err
			return
		}
		m.act.acked = append(m.act.acked, tomb)
		t.mu.Lock()
		m.clearTomb(g)
		t.mu.Unlock()
	}
	t.mu.Lock()
	t.dropIfIdle(g)
	t.mu.Unlock()
}

// clearTomb forgets g's tombstone, acked in the ledger. Callers hold t.mu.
func (m *machine) clearTomb(g *group) {
	t := m.groups
	delete(t.seqs, g.tomb)
	g.tomb = 0
	t.tombs--
}

// shift drops the first element, letting go of the array once empty.
func shift(s []uint64) []uint64 {
	if len(s) == 1 {
		return nil
	}
	return s[1:]
}

// recordGroupsLocked is part of send's ledger step: a ready message goes
// out together with the ack of its group's tombstone.
func (m *machine) recordGroupsLocked(s *jetlog.ConsumerState) {
	for i, msg := range m.scratch.msgs {
		if m.scratch.froms[i] != fromReady {
			continue
		}
		if g := m.groups.seqs[msg.Seq]; g != nil && g.tomb != 0 {
			s.Ack(g.tomb)
		}
	}
}

// sentGroups moves the ready messages just recorded as delivered from
// held back to in flight: after the ledger step, so that a seq is
// pending before it stops being held back (holds, doneWith).
func (m *machine) sentGroups(msgs []jetlog.Msg, froms []int) {
	t := m.groups
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, msg := range msgs {
		if froms[i] != fromReady {
			continue
		}
		g := t.seqs[msg.Seq]
		g.held = shift(g.held)
		t.held--
		if g.tomb != 0 {
			m.act.acked = append(m.act.acked, g.tomb)
			m.clearTomb(g)
		}
	}
}

// releaseLocked ends the delivery of seq, acked, terminated or given up
// on, inside a ledger step. It reports whether seq was pending, and
// whether it left the ledger (false when it stays as its group's
// tombstone: retention must wait for it). Without groups it is s.Ack.
func (m *machine) releaseLocked(s *jetlog.ConsumerState, seq uint64, now int64) (pending, left bool) {
	t := m.groups
	if t == nil {
		ok := s.Ack(seq)
		return ok, ok
	}
	p := s.Pending[seq]
	if p == nil || isTombstone(p) {
		return false, false // a tombstone was acked already
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.seqs[seq]
	if g == nil { // no key
		s.Ack(seq)
		return true, true
	}
	g.inflight--
	if g.inflight > 0 || len(g.held) == 0 {
		delete(t.seqs, seq)
		s.Ack(seq)
		t.dropIfIdle(g)
		return true, true
	}
	if g.tomb != 0 { // cannot happen with one in flight; keep the newest
		s.Ack(g.tomb)
		m.act.acked = append(m.act.acked, g.tomb)
		m.clearTomb(g)
	}
	s.Nak(seq, time.Duration(tombstoneAt-now))
	g.tomb = seq
	t.tombs++
	t.ready.push(g.held[0])
	return true, false
}

// groupNakDelay keeps a client's NAK delay under maxGroupWait.
func (m *machine) groupNakDelay(d time.Duration) time.Duration {
	if m.groups != nil {
		return min(d, maxGroupWait)
	}
	return d
}

// isTombstoneLocked reports whether seq is a tombstone, which acks,
// NAKs and progress reports leave alone.
func (m *machine) isTombstoneLocked(s *jetlog.ConsumerState, seq uint64) bool {
	if m.groups == nil {
		return false
	}
	p := s.Pending[seq]
	return p != nil && isTombstone(p)
}
