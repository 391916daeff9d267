package server

import (
	"fmt"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// bus has one account, "$G", and no routes or gateways:
// this file builds /accountz and /accstatz for that account and
// /routez and /gatewayz empty, in the reference's shapes (/leafz is
// leafz.go; the document types are server/monitor's).

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
	sys := s.opts.SystemAccount.name()
	if len(s.opts.SystemAccount.Users) > 0 {
		out.SystemAccount = sys
	}
	if acc == "" {
		out.Accounts = []string{globalAccount}
		if out.SystemAccount != "" {
			out.Accounts = []string{sys, globalAccount}
		}
		return out, nil
	}
	if s.hasSystemAccount(acc) {
		out.Account = &AccountInfo{Name: sys, Updated: s.mon.loaded.UTC(), Complete: true, NameTag: sys,
			Clients: s.systemConns(), Sublist: &SublistStats{}}
		return out, nil
	}
	if acc != globalAccount {
		return nil, fmt.Errorf("monitoring: account %q not found", acc)
	}
	st := s.sublistStats()
	out.Account = &AccountInfo{
		Name: globalAccount, Updated: s.mon.loaded.UTC(), Complete: true, JetStream: s.js != nil,
		Clients: s.numConns() - s.systemConns(), Subs: st.NumSubs, NameTag: globalAccount, Sublist: &st,
	}
	return out, nil
}

func (s *Server) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func dataStats(msgs, bytes int64) DataStats {
	return DataStats{MsgBytes: MsgBytes{Msgs: msgs, Bytes: bytes}, Gateways: &MsgBytes{}, Routes: &MsgBytes{}, Leafs: &MsgBytes{}}
}

// AccountStatz reports the account's traffic; an account without
// connections is listed only with unused.
func (s *Server) AccountStatz(unused bool) *AccountStatz {
	out := &AccountStatz{ServerID: s.id, Now: time.Now().UTC(), Accounts: []*AccountStat{}}
	t := s.traffic()
	if t.conns == 0 && !unused {
		return out
	}
	out.Accounts = append(out.Accounts, &AccountStat{
		Account: globalAccount, Name: globalAccount, Conns: t.conns, TotalConns: t.conns,
		NumSubs:       uint32(s.clientSubs()),
		Sent:          dataStats(t.outMsgs, t.outBytes),
		Received:      dataStats(t.inMsgs, t.inBytes),
		SlowConsumers: s.slowConsumers.Load(),
	})
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
