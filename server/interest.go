package server

import (
	"sync"
	"sync/atomic"

	"github.com/bus-dev/bus/subjects"
)

// interestWatchers tells whoever watches a literal subject (a push
// consumer's deliver subject) that a client subscription matching it came
// or went, so that nobody polls for interest. With no watchers a SUB pays
// one atomic load; a literal SUB then pays a map lookup, a wildcard SUB a
// pass over the watched subjects.
type interestWatchers struct {
	count atomic.Int64 // watchers registered, read without the lock

	mu        sync.Mutex // guards bySubject
	bySubject map[string][]*interestWatcher

	// imports are the stream imports that deliver under another subject
	// (importreach.go), replaced whole when imports are installed.
	imports atomic.Pointer[[]importWatch]
}

type interestWatcher struct{ notify func() }

// add registers notify for subject; the result unregisters it.
func (w *interestWatchers) add(subject string, notify func()) func() {
	iw := &interestWatcher{notify: notify}
	w.mu.Lock()
	if w.bySubject == nil {
		w.bySubject = map[string][]*interestWatcher{}
	}
	w.bySubject[subject] = append(w.bySubject[subject], iw)
	w.mu.Unlock()
	w.count.Add(1)
	return func() {
		w.mu.Lock()
		list := w.bySubject[subject]
		for i, x := range list {
			if x == iw {
				list = append(list[:i:i], list[i+1:]...)
				w.count.Add(-1)
				break
			}
		}
		if len(list) == 0 {
			delete(w.bySubject, subject)
		} else {
			w.bySubject[subject] = list
		}
		w.mu.Unlock()
	}
}

// changed is called after a client subscription on pattern was added or
// removed. The notify functions must not block (they signal a channel).
func (w *interestWatchers) changed(pattern string) {
	if w.count.Load() == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.notifyLocked(pattern)
	w.throughImports(pattern)
}

// notifyLocked tells the watchers of the subjects pattern matches (w.mu
// held).
func (w *interestWatchers) notifyLocked(pattern string) {
	if subjects.ValidLiteral(pattern) {
		for _, iw := range w.bySubject[pattern] {
			iw.notify()
		}
		return
	}
	for subject, list := range w.bySubject {
		if subjects.Matches(pattern, subject) {
			for _, iw := range list {
				iw.notify()
			}
		}
	}
}
