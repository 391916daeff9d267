package server

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/monitor"
	"github.com/bus-dev/bus/subjects"
)

// DefaultSubListSize is /subsz's limit when none is asked for, as in the
// reference.
const DefaultSubListSize = 1024

// The /subsz document and its options (see server/monitor).
type (
	SubszOptions = monitor.SubszOptions
	Subsz        = monitor.Subsz
	SublistStats = monitor.SublistStats
)

// ErrSubszTest is returned for a test subject that is not a valid
// publish subject.
var ErrSubszTest = errors.New("monitoring: test must be a valid publish subject")

func (s *Server) sublistStats() SublistStats {
	return trieStats(s.subs, int(s.internalSubs.Load()))
}

// trieStats are a trie's counters, the server's own internal
// subscriptions left out of the count.
func trieStats(trie *subjects.Trie[*subscription], internal int) SublistStats {
	st := trie.Stats()
	out := SublistStats{
		NumSubs:    uint32(max(st.Subscriptions-internal, 0)),
		NumCache:   uint32(st.CacheEntries),
		NumInserts: st.Inserts,
		NumRemoves: st.Removes,
		NumMatches: st.Matches,
		MaxFanout:  uint32(st.MaxFanout),
		AvgFanout:  st.AvgFanout,
	}
	if st.Matches > 0 {
		out.CacheHitRate = float64(st.CacheHits) / float64(st.Matches)
	}
	return out
}

// selectedSublistStats are the counters of the account named want, or
// of the global and the configured accounts together for "".
func (s *Server) selectedSublistStats(want string) SublistStats {
	switch a := s.lookupAccount(want); {
	case want == "" || a == s.global:
	case a == s.sys:
		return SublistStats{}
	default:
		return accountSublistStats(a)
	}
	out := s.sublistStats()
	if want != "" {
		return out
	}
	for _, a := range s.accountSet() {
		st := accountSublistStats(a)
		out.NumSubs += st.NumSubs
		out.NumCache += st.NumCache
		out.NumInserts += st.NumInserts
		out.NumRemoves += st.NumRemoves
		out.NumMatches += st.NumMatches
		out.MaxFanout = max(out.MaxFanout, st.MaxFanout)
	}
	return out
}

// Subsz reports the trie's counters and, with o.Subs, the clients'
// subscriptions ordered by subject, connection and sid. It returns an
// error wrapping ErrSubszTest for a bad o.Test.
func (s *Server) Subsz(o SubszOptions) (*Subsz, error) {
	if o.Test != "" && !subjects.ValidLiteral(o.Test) {
		return nil, fmt.Errorf("%w: %q", ErrSubszTest, o.Test)
	}
	if o.Limit <= 0 {
		o.Limit = DefaultSubListSize
	}
	o.Offset = max(o.Offset, 0)
	out := &Subsz{ServerID: s.id, Now: time.Now().UTC(), Offset: o.Offset, Limit: o.Limit}
	if o.Account != "" && s.lookupAccount(o.Account) == nil {
		return out, nil
	}
	out.SublistStats = s.selectedSublistStats(o.Account)
	if !o.Subs {
		return out, nil
	}
	conns := s.connList()
	var list []SubDetail
	for _, c := range conns {
		c.mu.Lock()
		account := c.accountName()
		if accountSelected(o.Account, account) {
			account = cmp.Or(account, globalAccount)
			for _, sub := range c.subs {
				if o.Test == "" || subjects.Matches(sub.subject, o.Test) {
					sd := sub.detail()
					sd.Account, sd.AccountTag = account, account
					list = append(list, sd)
				}
			}
		}
		c.mu.Unlock()
	}
	slices.SortFunc(list, func(a, b SubDetail) int {
		return cmp.Or(strings.Compare(a.Subject, b.Subject), cmp.Compare(a.Cid, b.Cid), strings.Compare(a.Sid, b.Sid))
	})
	out.Total = len(list)
	lo, hi := page(len(list), o.Offset, o.Limit)
	out.Subs = list[lo:hi]
	return out, nil
}
