package subjects

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// TestTrieConcurrent runs matchers against writers that insert and remove
// under -race. Each writer owns its ids and leaves a known final set, which
// is then checked. While running, matchers check what must hold at every
// instant: the permanent subscriptions are always matched, and a writer's
// churned id is never seen under a pattern it was not inserted with.
func TestTrieConcurrent(t *testing.T) {
	t.Parallel()
	const (
		writers  = 4
		matchers = 4
		rounds   = 300
	)
	tr := NewTrie[int]()
	// Permanent: id -1 on "svc.>", id -2 in queue "q" on "svc.*.get".
	mustInsert(t, tr, sub{"svc.>", "", -1}, sub{"svc.*.get", "q", -2})

	patterns := func(w int) []string {
		return []string{
			fmt.Sprintf("svc.w%d.get", w),    // literal
			fmt.Sprintf("svc.w%d.*", w),      // wildcard: scans the cache
			fmt.Sprintf("_INBOX.w%d.%%d", w), // inbox churn, formatted per round
		}
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, writers+matchers)

	for w := range writers {
		wg.Go(func() {
			p := patterns(w)
			for i := range rounds {
				inbox := fmt.Sprintf(p[2], i)
				for _, s := range []sub{{p[0], "", w}, {p[1], "q", w}, {inbox, "", w}} {
					if err := tr.Insert(s.pattern, s.queue, s.id); err != nil {
						errs <- err
						return
					}
				}
				// Leave round 0's subscriptions in place: the final state.
				if i == 0 {
					continue
				}
				for _, s := range []sub{{p[0], "", w}, {p[1], "q", w}, {inbox, "", w}} {
					if err := tr.Remove(s.pattern, s.queue, s.id); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}

	var matchersWG sync.WaitGroup
	for m := range matchers {
		matchersWG.Go(func() {
			subject := []byte(fmt.Sprintf("svc.w%d.get", m%writers))
			other := []byte(fmt.Sprintf("other.w%d", m))
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Spinning matchers would otherwise hold both CPUs for
				// whole time slices while writers wait to be scheduled.
				runtime.Gosched()
				r := tr.Match(subject)
				if !slices.Contains(r.Plain, -1) {
					errs <- fmt.Errorf("Match(%q) lost the permanent plain subscriber: %v", subject, r.Plain)
					return
				}
				for _, id := range r.Plain {
					if id >= 0 && id != m%writers {
						errs <- fmt.Errorf("Match(%q) returned writer %d's id", subject, id)
						return
					}
				}
				if !tr.Match(other).Empty() {
					errs <- fmt.Errorf("Match(%q) matched something", other)
					return
				}
			}
		})
	}

	wg.Wait()
	close(stop)
	matchersWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Final state: the permanent pair plus round 0 of every writer.
	if got, want := tr.Count(), 2+3*writers; got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
	for w := range writers {
		subject := fmt.Sprintf("svc.w%d.get", w)
		want := fmt.Sprintf("plain=[-1 %d] queues=[q:[-2] q:[%d]]", w, w)
		if got := describe(tr.MatchString(subject)); got != want {
			t.Errorf("MatchString(%q) = %s, want %s", subject, got, want)
		}
		inbox := fmt.Sprintf("_INBOX.w%d.0", w)
		if got, want := describe(tr.MatchString(inbox)), fmt.Sprintf("plain=[%d] queues=[]", w); got != want {
			t.Errorf("MatchString(%q) = %s, want %s", inbox, got, want)
		}
		// Later inboxes are gone, and so are their nodes.
		if r := tr.MatchString(fmt.Sprintf("_INBOX.w%d.%d", w, rounds-1)); !r.Empty() {
			t.Errorf("removed inbox still matches: %s", describe(r))
		}
	}
	inboxes := tr.root.literal("_INBOX")
	for w := range writers {
		if n := inboxes.literal(fmt.Sprintf("w%d", w)); n == nil || len(n.edges)+len(n.literals) != 1 {
			t.Errorf("writer %d's inbox node was not pruned to its one remaining child", w)
		}
	}
}
