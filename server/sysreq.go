package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/server/monitor"
	"github.com/bus-dev/bus/subjects"
)

// The monitoring requests over NATS, with the reference's subjects and
// envelopes (nats-server events.go): what nats-surveyor, NUI and the
// `nats server …` commands send. The system account's users (sysaccount.go)
// reach all of them; every other user is in the global account, where
// only the few the reference imports into every account answer.
const (
	sysPingSubject   = "$SYS.REQ.SERVER.PING"        // statsz, from every server
	sysPingPrefix    = "$SYS.REQ.SERVER.PING."       // + VARZ, CONNZ, …
	sysServerPrefix  = "$SYS.REQ.SERVER."            // + <server id>.VARZ, …
	sysUserInfo      = "$SYS.REQ.USER.INFO"          // who am I, for every user
	sysAccPingConnz  = "$SYS.REQ.ACCOUNT.PING.CONNZ" // one account's connections
	sysAccPingStatz  = "$SYS.REQ.ACCOUNT.PING.STATZ" // one or every account's traffic
	sysJetStreamAPI  = "$JS.API.>"                   // the system account has no JetStream
	sysAccountPrefix = "$SYS.REQ.ACCOUNT."           // + <account>.CONNZ, …, for the system account
	jsNotEnabledCode = 10039
)

// sysServerInfo is the envelope's "server": who answers (the reference's
// ServerInfo).
type sysServerInfo struct {
	Name      string    `json:"name"`
	Host      string    `json:"host"`
	ID        string    `json:"id"`
	Version   string    `json:"ver"`
	JetStream bool      `json:"jetstream"`
	Flags     uint64    `json:"flags"` // 1: JetStream on; bus claims no other capability
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
}

// sysResponse is the reference's ServerAPIResponse: the server and
// either data or an error.
type sysResponse struct {
	Server *sysServerInfo `json:"server"`
	Data   any            `json:"data,omitempty"`
	Error  *sysError      `json:"error,omitempty"`
}

type sysError struct {
	Code        int    `json:"code"`
	Description string `json:"description,omitempty"`
}

// EventFilterOptions are the reference's filters in a request body: a
// server answers only if it matches them all (by substring, or exactly
// with exact_match).
type EventFilterOptions struct {
	Name       string   `json:"server_name,omitempty"`
	Cluster    string   `json:"cluster,omitempty"`
	Host       string   `json:"host,omitempty"`
	ExactMatch bool     `json:"exact_match,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Domain     string   `json:"domain,omitempty"`
}

// filteredOut reports whether f excludes this server. bus has no
// cluster, tags or domain, so asking for any leaves it out.
func (s *Server) filteredOut(f *EventFilterOptions) bool {
	has := strings.Contains
	if f.ExactMatch {
		has = func(a, b string) bool { return a == b }
	}
	return f.Name != "" && !has(s.name, f.Name) || f.Host != "" && !has(s.opts.Host, f.Host) ||
		f.Cluster != "" || len(f.Tags) > 0 || f.Domain != ""
}

// sysEndpoint answers one kind of request: it decodes the body into its
// options (which embed EventFilterOptions) and builds the data.
type sysEndpoint struct {
	newOptions func() sysOptions
	serve      func(o sysOptions) (any, error)
}

// errNoAnswer is an endpoint's way to leave a request unanswered, as
// the reference leaves some (an idle account's STATZ).
var errNoAnswer = errors.New("server: no answer")

// sysOptions is a request body: endpoint options and the event filter.
type sysOptions interface{ filter() *EventFilterOptions }

func (f *EventFilterOptions) filter() *EventFilterOptions { return f }

type (
	noOptions    struct{ EventFilterOptions }
	connzRequest struct {
		ConnzOptions
		EventFilterOptions
	}
	subszRequest struct {
		SubszOptions
		EventFilterOptions
	}
	healthzRequest struct {
		HealthzOptions
		JSEnabled bool `json:"js-enabled,omitempty"` // the reference's older name
		EventFilterOptions
	}
	// clientRequest names one connection (KICK, LDM).
	clientRequest struct {
		CID uint64 `json:"cid"`
		EventFilterOptions
	}
	accountzRequest struct {
		Account string `json:"account"`
		EventFilterOptions
	}
	// jszRequest has the reference's JSzOptions names, which differ
	// from the HTTP parameters' (consumer, leader_only).
	jszRequest struct {
		Account          string `json:"account,omitempty"`
		Accounts         bool   `json:"accounts,omitempty"`
		Streams          bool   `json:"streams,omitempty"`
		Consumer         bool   `json:"consumer,omitempty"`
		DirectConsumer   bool   `json:"direct_consumer,omitempty"`
		Config           bool   `json:"config,omitempty"`
		LeaderOnly       bool   `json:"leader_only,omitempty"`
		Offset           int    `json:"offset,omitempty"`
		Limit            int    `json:"limit,omitempty"`
		RaftGroups       bool   `json:"raft,omitempty"`
		StreamLeaderOnly bool   `json:"stream_leader_only,omitempty"`
		EventFilterOptions
	}
)

// sysHealth is /healthz's document with the status code in the body, as
// the reference sends it over NATS.
type sysHealth struct {
	HealthStatus
	StatusCode int `json:"status_code"`
}

// ServerStatsMsg is the answer to $SYS.REQ.SERVER.PING: the envelope with
// "statsz" in place of "data".
type ServerStatsMsg struct {
	Server *sysServerInfo `json:"server"`
	Stats  ServerStats    `json:"statsz"`
}

// ServerStats is the reference's statsz, for a server without routes or
// gateways.
type ServerStats struct {
	Start                time.Time          `json:"start"`
	Mem                  int64              `json:"mem"`
	Cores                int                `json:"cores"`
	CPU                  float64            `json:"cpu"`
	Connections          int                `json:"connections"`
	TotalConnections     int64              `json:"total_connections"`
	ActiveAccounts       int                `json:"active_accounts"`
	NumSubs              uint32             `json:"subscriptions"`
	Sent                 MsgBytes           `json:"sent"`
	SentToClients        MsgBytes           `json:"sent_to_clients"`
	Received             MsgBytes           `json:"received"`
	ReceivedFromClients  MsgBytes           `json:"received_from_clients"`
	SlowConsumers        int64              `json:"slow_consumers"`
	SlowConsumersStats   *monitor.KindStats `json:"slow_consumer_stats,omitempty"`
	StaleConnections     int64              `json:"stale_connections,omitempty"`
	StaleConnectionStats *monitor.KindStats `json:"stale_connection_stats,omitempty"`
	ActiveServers        int                `json:"active_servers,omitempty"`
	JetStream            *jetstream.Varz    `json:"jetstream,omitempty"`
	MaxProcs             int                `json:"gomaxprocs,omitempty"`
}

// Statsz is the server's statsz: /varz's counters in the reference's
// event shape.
func (s *Server) Statsz() ServerStats {
	v := s.Varz()
	st := ServerStats{
		Start: v.Start, Mem: v.Mem, Cores: v.Cores, CPU: v.CPU,
		Connections: v.Connections, TotalConnections: v.TotalConnections,
		ActiveAccounts: s.activeAccounts(), NumSubs: uint32(v.Subscriptions),
		Sent:                MsgBytes{Msgs: v.OutMsgs, Bytes: v.OutBytes},
		SentToClients:       MsgBytes{Msgs: v.OutMsgs, Bytes: v.OutBytes},
		Received:            MsgBytes{Msgs: v.InMsgs, Bytes: v.InBytes},
		ReceivedFromClients: MsgBytes{Msgs: v.InMsgs, Bytes: v.InBytes},
		SlowConsumers:       v.SlowConsumers, SlowConsumersStats: v.SlowConsumerStats,
		StaleConnections: v.StaleConnections, StaleConnectionStats: v.StaleConnectionStats,
		ActiveServers: 1, MaxProcs: runtime.GOMAXPROCS(0),
	}
	if s.js != nil {
		js := s.jetStreamVarz()
		if js.Config != nil {
			cfg := *js.Config
			cfg.StoreDir = "" // statsz leaves it out, as the reference's
			js.Config = &cfg
		}
		st.JetStream = &js
	}
	// As the reference, the splits by kind only when there is something
	// to split.
	if v.SlowConsumers == 0 {
		st.SlowConsumersStats = nil
	}
	if v.StaleConnections == 0 {
		st.StaleConnectionStats = nil
	}
	return st
}

// activeAccounts counts the accounts with connections.
func (s *Server) activeAccounts() int {
	n, sys := 0, s.systemConns()
	if sys > 0 {
		n++
	}
	if s.numConns() > sys {
		n++
	}
	return n
}

// sysEndpoints are the endpoints of $SYS.REQ.SERVER.PING.<name> and
// $SYS.REQ.SERVER.<id>.<name>, each served by the code of its HTTP twin.
func (s *Server) sysEndpoints() map[string]sysEndpoint {
	none := func() sysOptions { return &noOptions{} }
	return map[string]sysEndpoint{
		"VARZ": {none, func(sysOptions) (any, error) { return s.Varz(), nil }},
		"CONNZ": {func() sysOptions { return &connzRequest{} }, func(o sysOptions) (any, error) {
			return s.Connz(o.(*connzRequest).ConnzOptions)
		}},
		"SUBSZ": {func() sysOptions { return &subszRequest{} }, func(o sysOptions) (any, error) {
			return s.Subsz(o.(*subszRequest).SubszOptions)
		}},
		"JSZ": {func() sysOptions { return &jszRequest{} }, func(o sysOptions) (any, error) {
			r := o.(*jszRequest)
			return s.Jsz(JszOptions{
				Account: r.Account, Accounts: r.Accounts, Streams: r.Streams, Consumers: r.Consumer,
				Config: r.Config, Raft: r.RaftGroups, Offset: r.Offset, Limit: r.Limit,
			}), nil
		}},
		"HEALTHZ": {func() sysOptions { return &healthzRequest{} }, func(o sysOptions) (any, error) {
			r := o.(*healthzRequest)
			opts := r.HealthzOptions
			opts.JSEnabledOnly = opts.JSEnabledOnly || r.JSEnabled
			h, code := s.Healthz(opts)
			return sysHealth{h, code}, nil
		}},
		"ACCOUNTZ": {func() sysOptions { return &accountzRequest{} }, func(o sysOptions) (any, error) {
			return s.Accountz(o.(*accountzRequest).Account)
		}},
		"ROUTEZ":   {none, func(sysOptions) (any, error) { return s.Routez(), nil }},
		"GATEWAYZ": {none, func(sysOptions) (any, error) { return s.Gatewayz(), nil }},
		"LEAFZ":    {none, func(sysOptions) (any, error) { return s.Leafz(false), nil }},
	}
}

// startSysRequests subscribes the server to the $SYS.REQ subjects: all
// of them in the system account's subject space, and in the global one
// those the reference answers for any user.
func (s *Server) startSysRequests() error {
	type service = sysService
	var list []service
	sys := s.sysSubs
	if s.opts.hasSystemUsers() {
		statsz := s.sysStatsz()
		list = append(list, service{sys, sysPingSubject, statsz})
		for name, e := range s.sysEndpoints() {
			h := s.sysHandler(sys, e)
			list = append(list, service{sys, sysPingPrefix + name, h}, service{sys, sysServerPrefix + s.id + "." + name, h})
		}
		for _, prefix := range []string{sysPingPrefix, sysServerPrefix + s.id + "."} {
			list = append(list, service{sys, prefix + "STATSZ", statsz}, service{sys, prefix + "IDZ", s.sysIdz(sys)})
		}
		sysConnz := s.sysHandler(sys, sysEndpoint{func() sysOptions { return &connzRequest{} }, func(o sysOptions) (any, error) {
			opts := o.(*connzRequest).ConnzOptions
			opts.Account = s.opts.SystemAccount.name()
			return s.Connz(opts)
		}})
		kick := s.sysHandler(sys, sysEndpoint{func() sysOptions { return &clientRequest{} }, func(o sysOptions) (any, error) {
			return nil, s.kickClient(o.(*clientRequest).CID)
		}})
		ldm := s.sysHandler(sys, sysEndpoint{func() sysOptions { return &clientRequest{} }, func(o sysOptions) (any, error) {
			return nil, s.lameDuckClient(o.(*clientRequest).CID)
		}})
		list = append(list,
			service{sys, sysServerPrefix + s.id + ".KICK", kick},
			service{sys, sysServerPrefix + s.id + ".LDM", ldm},
			service{sys, sysAccPingConnz, sysConnz},
			service{sys, sysUserInfo, s.sysUserInfo(sys)},
			service{sys, sysAccPingStatz, s.sysAccountStatz(sys, "")},
		)
		for kind, e := range s.accountEndpoints() {
			list = append(list, service{sys, sysAccountPrefix + "*." + kind, s.sysAccountRequest(sys, e)})
		}
		if s.opts.JetStream {
			// Without JetStream on the server, nobody answers, as in the
			// reference.
			list = append(list, service{sys, sysJetStreamAPI, s.noJetStream(sys)})
		}
	}
	list = append(list, s.accountServices(s.global)...)
	for _, svc := range list {
		sub := &subscription{subject: svc.subject, request: svc.h}
		if err := svc.trie.Insert(svc.subject, "", sub); err != nil {
			return err
		}
		if svc.trie == s.subs {
			s.internalSubs.Add(1)
		}
		s.sysServices = append(s.sysServices, sub)
	}
	return nil
}

// sysService is one $SYS.REQ service: a subject of one subject space.
type sysService struct {
	trie    *subjects.Trie[*subscription]
	subject string
	h       RequestHandler
}

// stopSysRequests removes what startSysRequests subscribed.
func (s *Server) stopSysRequests() {
	for _, sub := range s.sysServices {
		if s.subs.Remove(sub.subject, "", sub) == nil {
			s.internalSubs.Add(-1)
		} else {
			_ = s.sysSubs.Remove(sub.subject, "", sub)
		}
	}
	s.sysServices = nil
}

// envelope is the "server" of an answer, numbered as the reference
// numbers the messages it sends.
func (s *Server) envelope() *sysServerInfo {
	return &sysServerInfo{
		Name: s.name, Host: s.opts.Host, ID: s.id, Version: Version,
		JetStream: s.js != nil, Flags: boolFlag(s.js != nil), Seq: s.sysSeq.Add(1), Time: time.Now().UTC(),
	}
}

func boolFlag(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// sysReply sends v to reply within trie's subject space, so that an answer
// to a system account user never reaches another account.
func (s *Server) sysReply(trie *subjects.Trie[*subscription], reply []byte, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		s.log.Error("system request answer not encoded", "err", err)
		return
	}
	s.routeIn(trie, nil, reply, reply, nil, -1, data)
}

// requestBody is the payload of a request, without its headers.
func requestBody(hdr int, msg []byte) []byte {
	if hdr > 0 && hdr <= len(msg) {
		return msg[hdr:]
	}
	return msg
}

// decodeRequest reads a request body into o, as the reference does: an
// empty body takes the defaults and no filter. It reports whether this
// server answers, and the error to answer with.
func (s *Server) decodeRequest(body []byte, o sysOptions) (answer bool, err error) {
	if len(body) == 0 {
		return true, nil
	}
	if err := json.Unmarshal(body, o); err != nil {
		return true, err
	}
	return !s.filteredOut(o.filter()), nil
}

// sysHandler answers one endpoint's requests in trie: the data, or the
// reference's error (400 for a body it cannot read, 500 for options the
// endpoint refuses).
func (s *Server) sysHandler(trie *subjects.Trie[*subscription], e sysEndpoint) RequestHandler {
	return func(_ Rights, _, reply []byte, hdr int, msg []byte) bool {
		if len(reply) == 0 {
			return true
		}
		o := e.newOptions()
		answer, err := s.decodeRequest(requestBody(hdr, msg), o)
		if !answer {
			return true
		}
		resp := sysResponse{}
		if err != nil {
			resp.Error = &sysError{Code: http.StatusBadRequest, Description: err.Error()}
		} else if data, err := e.serve(o); errors.Is(err, errNoAnswer) {
			return true
		} else if err != nil {
			resp.Error = &sysError{Code: http.StatusInternalServerError, Description: err.Error()}
		} else {
			resp.Data = data
		}
		resp.Server = s.envelope()
		s.sysReply(trie, reply, resp)
		return true
	}
}

// sysStatsz answers $SYS.REQ.SERVER.PING and …STATSZ.
func (s *Server) sysStatsz() RequestHandler {
	return func(_ Rights, _, reply []byte, hdr int, msg []byte) bool {
		if len(reply) == 0 {
			return true
		}
		var f noOptions
		answer, err := s.decodeRequest(requestBody(hdr, msg), &f)
		switch {
		case !answer:
		case err != nil:
			s.sysReply(s.sysSubs, reply, sysResponse{Server: s.envelope(),
				Error: &sysError{Code: http.StatusBadRequest, Description: err.Error()}})
		default:
			st := s.Statsz()
			s.sysReply(s.sysSubs, reply, ServerStatsMsg{Server: s.envelope(), Stats: st})
		}
		return true
	}
}

// sysIdz answers …IDZ with the bare identity, no envelope, as the
// reference does.
func (s *Server) sysIdz(trie *subjects.Trie[*subscription]) RequestHandler {
	return func(_ Rights, _, reply []byte, _ int, _ []byte) bool {
		if len(reply) > 0 {
			s.sysReply(trie, reply, struct {
				Name string `json:"name"`
				Host string `json:"host"`
				ID   string `json:"id"`
			}{s.name, s.opts.Host, s.id})
		}
		return true
	}
}

// sysAccountStatz answers $SYS.REQ.ACCOUNT.PING.STATZ: every account's
// traffic, or only account's ("" for all).
func (s *Server) sysAccountStatz(trie *subjects.Trie[*subscription], account string) RequestHandler {
	return s.sysHandler(trie, sysEndpoint{func() sysOptions { return &accountStatzRequest{} }, func(o sysOptions) (any, error) {
		r := o.(*accountStatzRequest)
		st := s.AccountStatz(r.IncludeUnused)
		if account == "" && s.hasSystemAccount(s.opts.SystemAccount.name()) {
			st.Accounts = append(s.systemAccountStat(r.IncludeUnused), st.Accounts...)
		}
		want := r.Accounts
		if account != "" {
			want = []string{account} // a user sees its own account only
		}
		if len(want) > 0 {
			st.Accounts = slices.DeleteFunc(st.Accounts, func(a *AccountStat) bool { return !slices.Contains(want, a.Account) })
		}
		return st, nil
	}})
}

// systemAccountStat is the system account's line of /accstatz: its
// connections (their traffic is counted with the others').
func (s *Server) systemAccountStat(unused bool) []*AccountStat {
	n := s.systemConns()
	if n == 0 && !unused {
		return nil
	}
	name := s.opts.SystemAccount.name()
	return []*AccountStat{{Account: name, Name: name, Conns: n, TotalConns: n,
		Sent: dataStats(0, 0), Received: dataStats(0, 0)}}
}

// systemConns counts the system account's connections.
func (s *Server) systemConns() int { return int(s.sys.conns.Load()) }

// client is the open connection with id cid, or nil.
func (s *Server) client(cid uint64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[cid]
}

// kickClient closes a connection, as the reference's KICK request.
func (s *Server) kickClient(cid uint64) error {
	c := s.client(cid)
	if c == nil {
		return errors.New("no such client or leafnode id")
	}
	c.log.Info("client kicked by a system account request")
	c.close("Kicked", true)
	return nil
}

// lameDuckClient tells one connection to reconnect elsewhere, as the
// reference's LDM request: the lame-duck INFO, to that client alone.
func (s *Server) lameDuckClient(cid uint64) error {
	c := s.client(cid)
	if c == nil {
		return errors.New("no such client id")
	}
	if !c.asyncInfo.Load() {
		return errors.New("client does not support Lame Duck Mode or is not ready to receive the notification")
	}
	c.out.appendControl(s.lameDuckInfo(c))
	c.out.signal()
	return nil
}
