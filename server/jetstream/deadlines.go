package jetstream

import "container/heap"

// deadline is one redelivery deadline: seq becomes due at unix ns at.
type deadline struct {
	at  int64
	seq uint64
}

// deadlineHeap orders redelivery deadlines, earliest first (then lowest
// seq), so a consumer arms one timer for the next one instead of
// scanning its pending set. Entries go stale when a seq is acked or gets
// a new deadline; they are checked against the state when they come due
// and dropped then, and the heap is rebuilt when stale entries dominate.
type deadlineHeap []deadline

func (h deadlineHeap) Len() int { return len(h) }
func (h deadlineHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}
func (h deadlineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)   { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}

func (h *deadlineHeap) add(seq uint64, at int64) { heap.Push(h, deadline{at: at, seq: seq}) }

// peek returns the earliest entry; ok is false when the heap is empty.
func (h deadlineHeap) peek() (deadline, bool) {
	if len(h) == 0 {
		return deadline{}, false
	}
	return h[0], true
}

func (h *deadlineHeap) pop() deadline { return heap.Pop(h).(deadline) }

// compact keeps only the entries live says are current.
func (h *deadlineHeap) compact(live func(deadline) bool) {
	kept := (*h)[:0]
	for _, d := range *h {
		if live(d) {
			kept = append(kept, d)
		}
	}
	*h = kept
	heap.Init(h)
}
