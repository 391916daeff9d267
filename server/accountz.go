package server

import (
	"fmt"
	"net/http"
	"time"
)

// bus has one account, "$G", and no routes or gateways:
// this file serves /accountz and /accstatz for that account and
// /routez and /gatewayz empty, in the reference's shapes (/leafz is
// leafz.go).

// Accountz is the /accountz document: the account names, or one
// account's detail with acc.
type Accountz struct {
	ServerID      string       `json:"server_id"`
	Now           time.Time    `json:"now"`
	SystemAccount string       `json:"system_account,omitempty"`
	Accounts      []string     `json:"accounts,omitempty"`
	Account       *AccountInfo `json:"account_detail,omitempty"`
}

// AccountInfo is one account in /accountz.
type AccountInfo struct {
	Name      string        `json:"account_name"`
	Updated   time.Time     `json:"update_time,omitempty"`
	Expired   bool          `json:"expired"`
	Complete  bool          `json:"complete"`
	JetStream bool          `json:"jetstream_enabled"`
	Leafs     int           `json:"leafnode_connections"`
	Clients   int           `json:"client_connections"`
	Subs      uint32        `json:"subscriptions"`
	NameTag   string        `json:"name_tag,omitempty"`
	Sublist   *SublistStats `json:"sublist_stats,omitempty"`
}

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

func (s *Server) serveAccountz(w http.ResponseWriter, r *http.Request) {
	a, err := s.Accountz(r.URL.Query().Get("acc"))
	if err != nil {
		badRequest(w, err)
		return
	}
	writeJSON(w, a)
}

// AccountStatz is the /accstatz document.
type AccountStatz struct {
	ServerID string         `json:"server_id"`
	Now      time.Time      `json:"now"`
	Accounts []*AccountStat `json:"account_statz"`
}

// AccountStat is one account's traffic in /accstatz: sent is what its
// clients were sent, received what they published.
type AccountStat struct {
	Account       string    `json:"acc"`
	Name          string    `json:"name"`
	Conns         int       `json:"conns"`
	LeafNodes     int       `json:"leafnodes"`
	TotalConns    int       `json:"total_conns"`
	NumSubs       uint32    `json:"num_subscriptions"`
	Sent          DataStats `json:"sent"`
	Received      DataStats `json:"received"`
	SlowConsumers int64     `json:"slow_consumers"`
}

// DataStats counts messages, split by where they went (all to clients).
type DataStats struct {
	MsgBytes
	Gateways *MsgBytes `json:"gateways,omitempty"`
	Routes   *MsgBytes `json:"routes,omitempty"`
	Leafs    *MsgBytes `json:"leafs,omitempty"`
}

// MsgBytes is a message and byte count.
type MsgBytes struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

func dataStats(msgs, bytes int64) DataStats {
	return DataStats{MsgBytes: MsgBytes{msgs, bytes}, Gateways: &MsgBytes{}, Routes: &MsgBytes{}, Leafs: &MsgBytes{}}
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

func (s *Server) serveAccstatz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	unused := q.bool("unused")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, s.AccountStatz(unused))
}

// Routez is the /routez document: bus has no routes.
type Routez struct {
	ServerID   string     `json:"server_id"`
	ServerName string     `json:"server_name"`
	Now        time.Time  `json:"now"`
	NumRoutes  int        `json:"num_routes"`
	Routes     []struct{} `json:"routes"`
}

// Routez reports the (no) routes.
func (s *Server) Routez() Routez {
	return Routez{s.id, s.name, time.Now().UTC(), 0, []struct{}{}}
}

func (s *Server) serveRoutez(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.Routez())
}

// Gatewayz is the /gatewayz document: bus has no gateways.
type Gatewayz struct {
	ServerID string              `json:"server_id"`
	Now      time.Time           `json:"now"`
	Outbound map[string]struct{} `json:"outbound_gateways"`
	Inbound  map[string]struct{} `json:"inbound_gateways"`
}

// Gatewayz reports the (no) gateways.
func (s *Server) Gatewayz() Gatewayz {
	return Gatewayz{s.id, time.Now().UTC(), map[string]struct{}{}, map[string]struct{}{}}
}

func (s *Server) serveGatewayz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.Gatewayz())
}
