package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bus-dev/bus/server/jetstream"
	"github.com/bus-dev/bus/subjects"
)

// The $SYS.REQ services of accounts (account.go): those the reference
// imports into every account, the system account's requests about one
// account, and the answer of an account without JetStream.

// accountServices are the services the reference imports into every
// account, answered for that account alone: who am I, and the account's
// own connections and traffic.
func (s *Server) accountServices(acc *account) []sysService {
	connz := s.sysHandler(acc.trie, sysEndpoint{func() sysOptions { return &connzRequest{} }, func(o sysOptions) (any, error) {
		opts := o.(*connzRequest).ConnzOptions
		opts.Account = acc.name
		return s.Connz(opts)
	}})
	return []sysService{
		{acc.trie, sysUserInfo, s.sysUserInfo(acc.trie)},
		{acc.trie, sysPingPrefix + "CONNZ", connz},
		{acc.trie, sysAccPingConnz, connz},
		{acc.trie, sysAccPingStatz, s.sysAccountStatz(acc.trie, acc.name)},
	}
}

// installAccountServices subscribes a configured account's services in
// its trie, for as long as the account lives (account.go).
func (s *Server) installAccountServices(acc *account) error {
	for _, svc := range s.accountServices(acc) {
		if err := acc.trie.Insert(svc.subject, "", &subscription{subject: svc.subject, request: svc.h}); err != nil {
			return err
		}
		acc.internal.Add(1)
	}
	return nil
}

// accountEndpoints are the $SYS.REQ.ACCOUNT.<account>.… requests the
// system account may make about any account: each as the server-wide
// one, for that account alone.
func (s *Server) accountEndpoints() map[string]func(account string) sysEndpoint {
	return map[string]func(string) sysEndpoint{
		"CONNZ": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &connzRequest{} }, func(o sysOptions) (any, error) {
				opts := o.(*connzRequest).ConnzOptions
				opts.Account = acc
				return s.Connz(opts)
			}}
		},
		"SUBSZ": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &subszRequest{} }, func(o sysOptions) (any, error) {
				opts := o.(*subszRequest).SubszOptions
				opts.Account = acc
				return s.Subsz(opts)
			}}
		},
		"JSZ": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &jszRequest{} }, func(o sysOptions) (any, error) {
				return s.accountJsz(acc, o.(*jszRequest))
			}}
		},
		"LEAFZ": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &noOptions{} }, func(sysOptions) (any, error) {
				z := s.Leafz(false)
				z.Leafs = slices.DeleteFunc(z.Leafs, func(l *LeafInfo) bool { return l.Account != acc })
				z.NumLeafs = len(z.Leafs)
				return z, nil
			}}
		},
		"STATZ": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &accountStatzRequest{} }, func(o sysOptions) (any, error) {
				r := o.(*accountStatzRequest)
				st := s.AccountStatz(r.IncludeUnused)
				st.Accounts = slices.DeleteFunc(st.Accounts, func(a *AccountStat) bool { return a.Account != acc })
				if len(st.Accounts) == 0 && !r.IncludeUnused {
					return nil, errNoAnswer // as the reference, silence for an idle account
				}
				return st, nil
			}}
		},
		"INFO": func(acc string) sysEndpoint {
			return sysEndpoint{func() sysOptions { return &noOptions{} }, func(sysOptions) (any, error) {
				z, err := s.Accountz(acc)
				if err != nil {
					return nil, err
				}
				return z.Account, nil
			}}
		},
	}
}

// sysAccountRequest serves $SYS.REQ.ACCOUNT.<account>.<kind> with the
// endpoint made for the account the subject names.
func (s *Server) sysAccountRequest(trie *subjects.Trie[*subscription], e func(account string) sysEndpoint) RequestHandler {
	return func(r Rights, subject, reply []byte, hdr int, msg []byte) bool {
		acc, _, _ := strings.Cut(strings.TrimPrefix(string(subject), sysAccountPrefix), ".")
		if acc == "PING" {
			return false // $SYS.REQ.ACCOUNT.PING.… is served on its own
		}
		return s.sysHandler(trie, e(acc))(r, subject, reply, hdr, msg)
	}
}

// noJetStream answers the JetStream API requests of an account without
// JetStream (the system account, or one without a jetstream key) in
// trie, as the reference does.
func (s *Server) noJetStream(trie *subjects.Trie[*subscription]) RequestHandler {
	return func(_ Rights, subject, reply []byte, _ int, _ []byte) bool {
		if serviceImported(trie, subject) || serviceImported(trie, jsAPIInfoSubject) {
			// Another account's JetStream answers it through the
			// import, as in the reference, where an account without
			// JetStream has no API of its own to answer first. An
			// account that imports $JS.API.INFO uses another's
			// JetStream: the reference gives it no API of its own at
			// all, so what it does not import has no responders
			// (nats.go's Bind then goes ahead without CONSUMER.INFO).
			return false
		}
		if len(reply) > 0 {
			s.replyNoJetStream(trie, reply)
		}
		return true
	}
}

// jsAPIInfoSubject is $JS.API.INFO, the request whose import makes an
// account another's JetStream user (noJetStream).
var jsAPIInfoSubject = []byte("$JS.API.INFO")

// serviceImported reports whether a service import of trie's account
// takes requests on subject.
func serviceImported(trie *subjects.Trie[*subscription], subject []byte) bool {
	for _, sub := range trie.Match(subject).Plain {
		if sub.imported && sub.reach == nil {
			return true
		}
	}
	return false
}

func (s *Server) replyNoJetStream(trie *subjects.Trie[*subscription], reply []byte) {
	s.sysReply(trie, reply, struct {
		Type  string `json:"type"`
		Error struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}{Type: "io.nats.jetstream.api.v1.account_info_response", Error: struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	}{503, jsNotEnabledCode, "JetStream not enabled for account"}})
}

// accountStatzRequest is the body of an account's STATZ request.
type accountStatzRequest struct {
	Accounts      []string `json:"accounts"`
	IncludeUnused bool     `json:"include_unused"`
	EventFilterOptions
}

// accountJsz answers $SYS.REQ.ACCOUNT.<acc>.JSZ: the account's /jsz
// detail, or the reference's errors for an account that is unknown or
// has no JetStream.
func (s *Server) accountJsz(acc string, r *jszRequest) (any, error) {
	if s.js == nil {
		return nil, fmt.Errorf("jetstream not enabled")
	}
	for _, a := range s.accountJetStreams() {
		if a.name != acc {
			continue
		}
		j := jetstream.JszOf(s.id, JszOptions{Account: acc, Streams: r.Streams, Consumers: r.Consumer, Config: r.Config}, a.js)
		return j.AccountDetails[0], nil
	}
	if s.lookupAccount(acc) == nil {
		return nil, fmt.Errorf("account %q not found", acc)
	}
	return nil, fmt.Errorf("account %q not jetstream enabled", acc)
}
