package jetstream

import "slices"

// A stream's side of mirrors and sources (sourcing.go): the sourcers that
// copy into it, and the watchers it wakes when it stores something.

// startSourcing starts a sourcer for the mirror and each source of the
// stream's config, unless they run already, the stream is closing, or
// its owner's rights do not cover them (setSuspended starts them when
// they do again). An update stops them first (updateSourcing).
func (st *stream) startSourcing() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.sourcers != nil || st.closing || st.suspended.Load() != nil {
		return
	}
	cfg := st.cfg
	// The sourcers' goroutines take mu to read the config: they wait
	// for it, nothing here waits for them.
	list := []*sourcer{}
	if cfg.Mirror != nil {
		list = append(list, newSourcer(st, *cfg.Mirror, true))
	}
	for _, s := range cfg.Sources {
		list = append(list, newSourcer(st, *s, false))
	}
	st.sourcers = list
}

// stopSourcing stops the sourcers copying into the stream.
func (st *stream) stopSourcing() {
	st.mu.Lock()
	list := st.sourcers
	st.sourcers = nil
	st.mu.Unlock()
	for _, s := range list {
		s.close()
	}
}

// updateSourcing restarts the sourcing when an update changed it; each
// source resumes where it stopped (its seqs are in the stream). The
// consumers on external origins of the mirror or sources the update
// removed are deleted; the others are left to their inactive threshold
// (or found again), as the reference does.
func (st *stream) updateSourcing(old, cfg streamConfig) {
	if sameJSON(old.Mirror, cfg.Mirror) && sameJSON(old.Sources, cfg.Sources) {
		return
	}
	st.retireSourcers(func(s *sourcer) bool {
		if s.mirror {
			return cfg.Mirror == nil || !sameJSON(*cfg.Mirror, s.cfg)
		}
		for _, c := range cfg.Sources {
			if sameJSON(*c, s.cfg) {
				return false
			}
		}
		return true
	})
	st.stopSourcing()
	st.startSourcing()
}

// retireSourcers marks the running sourcers that gone says are gone for
// good: stopping, they delete their consumers on the origin. A sourcer
// stopped otherwise (a shutdown, an update that keeps it, a lost link)
// leaves its consumer to the inactive threshold, as the reference does.
func (st *stream) retireSourcers(gone func(*sourcer) bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, s := range st.sourcers {
		if gone(s) {
			s.retired.Store(true)
		}
	}
}

// watch makes s hear of the stream's appends; unwatch stops it.
func (st *stream) watch(s *sourcer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var list []*sourcer
	if w := st.watchers.Load(); w != nil {
		list = slices.Clone(*w)
	}
	list = append(list, s)
	st.watchers.Store(&list)
}

func (st *stream) unwatch(s *sourcer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	w := st.watchers.Load()
	if w == nil {
		return
	}
	list := slices.DeleteFunc(slices.Clone(*w), func(x *sourcer) bool { return x == s })
	st.watchers.Store(&list)
}
