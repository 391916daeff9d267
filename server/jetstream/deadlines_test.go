package jetstream

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The heap pops what a sorted slice would, through random adds, pops and
// compactions.
func TestDeadlineHeapMatchesSortedModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	var h deadlineHeap
	var model []deadline
	sortModel := func() {
		slices.SortFunc(model, func(a, b deadline) int { return map[bool]int{true: -1, false: 1}[a.before(b)] })
	}
	for range 20000 {
		switch op := rng.IntN(10); {
		case op < 6:
			d := deadline{at: rng.Int64N(100), seq: rng.Uint64N(50)}
			h.add(d.seq, d.at)
			model = append(model, d)
		case op < 9 && len(model) > 0:
			sortModel()
			if got := h.pop(); got != model[0] {
				t.Fatalf("pop %+v, model %+v", got, model[0])
			}
			model = model[1:]
		case op == 9:
			odd := func(d deadline) bool { return d.seq%2 == 1 }
			h.compact(odd)
			model = slices.DeleteFunc(model, func(d deadline) bool { return !odd(d) })
		}
		if h.Len() != len(model) {
			t.Fatalf("len %d, model %d", h.Len(), len(model))
		}
	}
}

func TestDeadlineHeapDoesNotAllocate(t *testing.T) {
	h := make(deadlineHeap, 0, 16)
	if n := testing.AllocsPerRun(100, func() {
		h.add(3, 30)
		h.add(1, 10)
		h.pop()
		h.pop()
	}); n != 0 {
		t.Fatalf("%v allocations per add+pop", n)
	}
}
