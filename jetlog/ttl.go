package jetlog

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/bus-dev/bus/header"
)

// Per-message TTLs. With StreamConfig.MsgTTL a message may carry a
// Nats-TTL header: whole seconds ("30"), a Go duration of at least a
// second ("1m30s"), or "never", which also exempts it from MaxAge. The
// appender keeps a heap of expiry times of the live messages that have
// one, fed as they are committed; Open rebuilds it from the headers, so
// nothing about TTLs is stored beside the messages. Expired messages are
// removed by the background expiry, and their removal is journaled
// lazily, as MaxAge removals are: after a crash, recovery finds them
// expired again.
//
// With StreamConfig.SubjectDeleteMarkerTTL, removing by age or TTL the
// last message of a subject (not itself a marker) is reported through
// Options.OnSubjectExpired, so that the stream can store a delete marker
// in its place.

const (
	ttlHeader          = "Nats-TTL"
	markerReasonHeader = "Nats-Marker-Reason"
)

// ErrBadTTL is a Nats-TTL value that is not a TTL.
var ErrBadTTL = errors.New("invalid per-message TTL")

// ParseTTL reads a Nats-TTL value: seconds, or -1 for "never". 0 means
// no TTL. Durations under a second are refused, as by the reference.
func ParseTTL(v []byte) (int64, error) {
	if bytes.EqualFold(v, []byte("never")) {
		return -1, nil
	}
	if d, err := time.ParseDuration(string(v)); err == nil {
		if d < time.Second {
			return 0, ErrBadTTL
		}
		return int64(d / time.Second), nil
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, ErrBadTTL
	}
	var n int64
	for _, b := range v {
		if b < '0' || b > '9' {
			return 0, ErrBadTTL
		}
		n = n*10 + int64(b-'0')
	}
	return n, nil
}

// msgTTL is the TTL of a message with header block hdr: 0 for none or an
// unreadable value (the stream refuses those before they are stored).
func msgTTL(hdr []byte) int64 {
	if len(hdr) == 0 {
		return 0
	}
	v := header.Value(hdr, ttlHeader)
	if v == nil {
		return 0
	}
	ttl, err := ParseTTL(v)
	if err != nil {
		return 0
	}
	return ttl
}

// isMarker reports whether a header block is a subject delete marker's.
func isMarker(hdr []byte) bool { return header.Value(hdr, markerReasonHeader) != nil }

// ttlEntry is one message's expiry.
type ttlEntry struct {
	at  int64 // unix ns
	seq uint64
}

// ttlIndex holds the expiries of live messages with a TTL (a min-heap by
// time; entries of messages removed otherwise are dropped when they
// surface) and the messages that never expire.
type ttlIndex struct {
	due   []ttlEntry
	never map[uint64]struct{}
}

// note records the TTL of a message stored at ts (unix ns).
func (x *ttlIndex) note(seq uint64, ts, ttl int64) {
	switch {
	case ttl < 0:
		if x.never == nil {
			x.never = map[uint64]struct{}{}
		}
		x.never[seq] = struct{}{}
	case ttl > 0:
		x.push(ttlEntry{at: ts + ttl*int64(time.Second), seq: seq})
	}
}

func (x *ttlIndex) push(e ttlEntry) {
	x.due = append(x.due, e)
	for i := len(x.due) - 1; i > 0; {
		p := (i - 1) / 2
		if x.due[p].at <= x.due[i].at {
			break
		}
		x.due[p], x.due[i] = x.due[i], x.due[p]
		i = p
	}
}

func (x *ttlIndex) pop() ttlEntry {
	top := x.due[0]
	n := len(x.due) - 1
	x.due[0] = x.due[n]
	x.due = x.due[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && x.due[l].at < x.due[m].at {
			m = l
		}
		if r < n && x.due[r].at < x.due[m].at {
			m = r
		}
		if m == i {
			break
		}
		x.due[i], x.due[m] = x.due[m], x.due[i]
		i = m
	}
	if len(x.due) == 0 {
		x.due = nil // a burst of TTLs should not pin memory
	}
	return top
}

// noteCommitted records the TTLs of the messages just committed. Called on
// the appender goroutine.
func (l *Log) noteCommitted() {
	if !l.cfg.MsgTTL {
		return
	}
	for i := range l.ap.staged {
		s := &l.ap.staged[i]
		if ttl := msgTTL(s.req.msgs[s.idx].Header); ttl != 0 {
			l.ap.ttl.note(s.seq, s.ts, ttl)
		}
	}
}

// forget drops a removed message from the never-expire set (its heap
// entry is dropped when it surfaces).
func (x *ttlIndex) forget(seq uint64) {
	if x.never != nil {
		delete(x.never, seq)
	}
}

// expireTTLs removes the messages whose TTL has passed at now and returns
// how many. It runs in the appender.
func (l *Log) expireTTLs(now int64) uint64 {
	x := &l.ap.ttl
	if len(x.due) == 0 || x.due[0].at > now {
		return 0
	}
	var seqs []uint64
	for len(x.due) > 0 && x.due[0].at <= now {
		seqs = append(seqs, x.pop().seq)
	}
	for _, seq := range seqs {
		l.cat.loadAt(seq) // not under the lock
	}
	var n uint64
	var emptied []string
	l.mu.Lock()
	for _, seq := range seqs {
		if l.expireSeqLocked(seq, &emptied) {
			n++
		}
	}
	dead := l.detachDeadLocked()
	l.mu.Unlock()
	l.removeSegments(dead)
	l.reportEmptied(emptied)
	return n
}

// expireSeqLocked removes seq, which has aged out or expired, queues its
// removal for the next tombstone, adds its subject to emptied when it
// needs a delete marker, and reports whether seq was live.
func (l *Log) expireSeqLocked(seq uint64, emptied *[]string) bool {
	subj, ok := l.removeExpiredLocked(seq)
	if !ok {
		return false
	}
	l.ap.tomb.seqs = append(l.ap.tomb.seqs, seq)
	if subj != "" {
		*emptied = append(*emptied, subj)
	}
	return true
}

// removeExpiredLocked removes seq, which has aged out or expired. With
// delete markers on, it also returns the subject when seq was the last
// message of its subject and not a marker itself.
func (l *Log) removeExpiredLocked(seq uint64) (string, bool) {
	m, seg := l.cat.locate(seq)
	if m == nil || m.subj == nil {
		return "", false
	}
	subj := ""
	if l.cfg.SubjectDeleteMarkerTTL > 0 && m.subj.count == 1 {
		r, err := seg.readRecord(l.seal, make([]byte, m.size), m.off)
		if err != nil || !isMarker(r.hdr) {
			subj = m.subj.name // a marker for an unreadable record too: its subject is gone
		}
	}
	if !l.cat.remove(seq) {
		return "", false
	}
	l.ap.ttl.forget(seq)
	return subj, true
}

// reportEmptied hands the subjects that lost their last message to age or
// TTL to the stream (see Options.OnSubjectExpired).
func (l *Log) reportEmptied(subjects []string) {
	if len(subjects) == 0 || l.opts.OnSubjectExpired == nil {
		return
	}
	l.opts.OnSubjectExpired(subjects)
}

// rebuildTTLs reads the TTLs of the live messages after Open recovered
// the catalog: one read of every live message with a header block.
func (l *Log) rebuildTTLs() error {
	if !l.cfg.MsgTTL {
		return nil
	}
	err := l.liveRecords(l.cat.segs, func(*msgMeta) bool { return true }, func(seq uint64, r record) {
		if ttl := msgTTL(r.hdr); ttl != 0 {
			l.ap.ttl.note(seq, r.ts, ttl)
		}
	})
	if err != nil {
		return fmt.Errorf("jetlog: read TTLs: %w", err)
	}
	return nil
}
