package jetstream

import "github.com/bus-dev/bus/jetlog"

// rebuildGroups restores the busy groups, tombstones and held-back
// messages of a restarted consumer from its ledger (see groups): it
// reads the stream from the ack floor to Delivered once. Tombstones
// with nothing left to hold back (their group's held messages are above
// Delivered, and will be read again as new, or are gone) are acked.
func (m *machine) rebuildGroups() {
	t := m.groups
	var floor, delivered uint64
	pending := map[uint64]bool{} // seq → is a tombstone
	_ = m.ledger.Update(func(s *jetlog.ConsumerState) {
		floor, delivered = s.AckFloor.Stream, s.Delivered.Stream
		for seq, p := range s.Pending {
			pending[seq] = isTombstone(p)
		}
	}, false)
	if len(pending) == 0 {
		return // nothing pending: nothing is held back
	}
	var stale []uint64 // tombstones to ack
	t.mu.Lock()
scan:
	for seq := floor + 1; seq <= delivered; {
		batch, _ := m.src.NextBatch(seq, m.cfg.filters(), 1024)
		if len(batch) == 0 {
			break
		}
		for _, msg := range batch {
			if msg.Seq > delivered {
				break scan
			}
			seq = msg.Seq + 1
			tomb, isPending := pending[msg.Seq]
			delete(pending, msg.Seq)
			switch {
			case isPending && !tomb:
				if g := t.add(msg); g != nil {
					g.inflight++
					t.seqs[msg.Seq] = g
				}
			case isPending:
				g := t.add(msg)
				if g == nil {
					stale = append(stale, msg.Seq)
					continue
				}
				if g.tomb != 0 {
					stale = append(stale, g.tomb)
					delete(t.seqs, g.tomb)
					t.tombs--
				}
				g.tomb = msg.Seq
				t.seqs[msg.Seq] = g
				t.tombs++
			default:
				if g, _ := t.find(msg); g != nil {
					g.held = append(g.held, msg.Seq)
					t.seqs[msg.Seq] = g
					t.held++
				}
			}
		}
	}
	for seq, tomb := range pending { // gone from the stream
		if tomb {
			stale = append(stale, seq)
		}
	}
	for _, g := range t.byKey {
		switch {
		case len(g.held) > 0 && g.inflight == 0:
			t.ready.push(g.held[0])
		case len(g.held) == 0 && g.tomb != 0:
			stale = append(stale, g.tomb)
			delete(t.seqs, g.tomb)
			g.tomb = 0
			t.tombs--
			t.dropIfIdle(g)
		}
	}
	t.mu.Unlock()
	if len(stale) > 0 {
		m.act.err = m.ledger.Update(func(s *jetlog.ConsumerState) {
			for _, seq := range stale {
				s.Ack(seq)
			}
		}, false)
		m.act.acked = append(m.act.acked, stale...)
	}
}

// seqHeap is a min-heap of seqs, written out like deadlineHeap so that
// pushing boxes nothing.
type seqHeap []uint64

func (h seqHeap) Len() int { return len(h) }

func (h *seqHeap) push(seq uint64) {
	*h = append(*h, seq)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if s[parent] <= s[i] {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes and returns the lowest seq; the heap must not be empty.
func (h *seqHeap) pop() uint64 {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	*h = s
	for i := 0; ; {
		low, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l] < s[low] {
			low = l
		}
		if r < len(s) && s[r] < s[low] {
			low = r
		}
		if low == i {
			return top
		}
		s[i], s[low] = s[low], s[i]
		i = low
	}
}
