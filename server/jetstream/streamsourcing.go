package jetstream

import "slices"

// A stream's side of mirrors and sources (sourcing.go): the sourcers that
// copy into it, and the watchers it wakes when it stores something.

// startSourcing starts a sourcer for the mirror and each source of cfg.
func (st *stream) startSourcing(cfg streamConfig) {
	if st.suspended.Load() != nil {
		return // resumed by setSuspended
	}
	var list []*sourcer
	if cfg.Mirror != nil {
		list = append(list, newSourcer(st, *cfg.Mirror, true))
	}
	for _, s := range cfg.Sources {
		list = append(list, newSourcer(st, *s, false))
	}
	st.mu.Lock()
	st.sourcers = list
	st.mu.Unlock()
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
// source resumes where it stopped (its seqs are in the stream).
func (st *stream) updateSourcing(old, cfg streamConfig) {
	if sameJSON(old.Mirror, cfg.Mirror) && sameJSON(old.Sources, cfg.Sources) {
		return
	}
	st.stopSourcing()
	st.startSourcing(cfg)
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
