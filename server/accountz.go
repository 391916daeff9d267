package server

import (
	"cmp"
	"fmt"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// bus has the global account "$G", the system account and the
// configured accounts (account.go), and no routes or gateways: this file
// builds /accountz and /accstatz for the accounts and /routez and
// /gatewayz empty, in the reference's shapes (/leafz is leafz.go; the
// document types are server/monitor's).

// The documents of /accountz, /accstatz, /routez and /gatewayz.
type (
	Accountz     = monitor.Accountz
	AccountInfo  = monitor.AccountInfo
	AccountStatz = monitor.AccountStatz
	AccountStat  = monitor.AccountStat
	DataStats    = monitor.DataStats
	MsgBytes     = monitor.MsgBytes
	Routez       = monitor.Routez
	Gatewayz     = monitor.Gatewayz
)

// Accountz lists the accounts, or details acc; an unknown acc is an
// error.
func (s *Server) Accountz(acc string) (*Accountz, error) {
	out := &Accountz{ServerID: s.id, Now: time.Now().UTC()}
	if s.opts.hasSystemUsers() {
		out.SystemAccount = s.sys.name
	}
	if acc == "" {
		out.Accounts = s.accountNames()
		return out, nil
	}
	a := s.lookupAccount(acc)
	if a == nil {
		return nil, fmt.Errorf("monitoring: account %q not found", acc)
	}
	info := &AccountInfo{Name: a.name, Updated: s.mon.loaded.UTC(), Complete: true, NameTag: cmp.Or(a.nameTag, a.name),
		Clients: int(a.conns.Load()), Sublist: &SublistStats{}}
	switch a {
	case s.global:
		st := s.sublistStats()
		// Connections not yet authenticated count as the global
		// account's, where they start.
		info.JetStream, info.Clients, info.Subs, info.Sublist = s.js != nil, s.globalConns(), st.NumSubs, &st
	case s.sys:
	default:
		st := accountSublistStats(a)
		info.JetStream, info.Subs, info.Sublist = a.js.Load() != nil, st.NumSubs, &st
	}
	out.Account = info
	return out, nil
}

func (s *Server) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// globalConns counts the connections of the global account: every one
// not counted in another.
func (s *Server) globalConns() int {
	n := s.numConns() - int(s.sys.conns.Load())
	for _, a := range s.accountSet() {
		n -= int(a.conns.Load())
	}
	return max(n, 0)
}

func dataStats(msgs, bytes int64) DataStats {
	return DataStats{MsgBytes: MsgBytes{Msgs: msgs, Bytes: bytes}, Gateways: &MsgBytes{}, Routes: &MsgBytes{}, Leafs: &MsgBytes{}}
}

// AccountStatz reports the traffic of the global and the configured
// accounts, sorted by name; an account without connections is listed
// only with unused.
func (s *Server) AccountStatz(unused bool) *AccountStatz {
	out := &AccountStatz{ServerID: s.id, Now: time.Now().UTC(), Accounts: []*AccountStat{}}
	byAcc := s.accountTraffic()
	for _, name := range s.accountNames() {
		a := s.lookupAccount(name)
		if a == nil || a == s.sys {
			continue
		}
		t := byAcc[a]
		if t.conns == 0 && !unused {
			continue
		}
		subs := s.clientSubs()
		if a != s.global {
			subs = a.trie.Count() - int(a.internal.Load())
		}
		out.Accounts = append(out.Accounts, &AccountStat{
			Account: a.name, Name: a.name, Conns: t.conns, TotalConns: t.conns,
			NumSubs:       uint32(max(subs, 0)),
			Sent:          dataStats(t.outMsgs, t.outBytes),
			Received:      dataStats(t.inMsgs, t.inBytes),
			SlowConsumers: t.slow,
		})
	}
	return out
}

// Routez reports the (no) routes.
func (s *Server) Routez() Routez {
	return Routez{ServerID: s.id, ServerName: s.name, Now: time.Now().UTC(), Routes: []struct{}{}}
}

// Gatewayz reports the (no) gateways.
func (s *Server) Gatewayz() Gatewayz {
	return Gatewayz{ServerID: s.id, Now: time.Now().UTC(), Outbound: map[string]struct{}{}, Inbound: map[string]struct{}{}}
}
