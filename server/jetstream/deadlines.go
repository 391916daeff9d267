package jetstream

// deadline is one redelivery deadline: seq becomes due at unix ns at.
type deadline struct {
	at  int64
	seq uint64
}

func (d deadline) before(e deadline) bool {
	return d.at < e.at || d.at == e.at && d.seq < e.seq
}

// deadlineHeap orders redelivery deadlines, earliest first (then lowest
// seq), so a consumer arms one timer for the next one instead of
// scanning its pending set. Entries go stale when a seq is acked or gets
// a new deadline; they are checked against the state when they come due
// and dropped then, and the heap is rebuilt when stale entries dominate.
// It is a binary heap on a slice, written out rather than through
// container/heap so that pushing and popping box nothing (one entry per
// delivery; see BenchmarkJetStream/fetch).
type deadlineHeap []deadline

func (h deadlineHeap) Len() int { return len(h) }

func (h *deadlineHeap) add(seq uint64, at int64) {
	*h = append(*h, deadline{at: at, seq: seq})
	h.up(len(*h) - 1)
}

// peek returns the earliest entry; ok is false when the heap is empty.
func (h deadlineHeap) peek() (deadline, bool) {
	if len(h) == 0 {
		return deadline{}, false
	}
	return h[0], true
}

// pop removes and returns the earliest entry; the heap must not be empty.
func (h *deadlineHeap) pop() deadline {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

// compact keeps only the entries live says are current.
func (h *deadlineHeap) compact(live func(deadline) bool) {
	kept := (*h)[:0]
	for _, d := range *h {
		if live(d) {
			kept = append(kept, d)
		}
	}
	*h = kept
	for i := len(kept)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h deadlineHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h deadlineHeap) down(i int) {
	for {
		smallest, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].before(h[smallest]) {
			smallest = l
		}
		if r < len(h) && h[r].before(h[smallest]) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
}
