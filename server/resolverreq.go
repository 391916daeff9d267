package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// The NATS resolver's requests in the system account, with the
// reference's subjects and answers (nats-server accounts.go):
//
//	$SYS.REQ.CLAIMS.UPDATE                 an account JWT to store and apply
//	$SYS.REQ.ACCOUNT.<key>.CLAIMS.UPDATE   the same for account <key>
//	$SYS.ACCOUNT.<key>.CLAIMS.UPDATE       its older name
//	$SYS.REQ.ACCOUNT.<key>.CLAIMS.LOOKUP   the stored JWT, empty for none
//	$SYS.REQ.CLAIMS.LOOKUP                 the same, the key in the body (bus)
//	$SYS.REQ.CLAIMS.LIST                   the stored accounts' keys
//	$SYS.REQ.CLAIMS.DELETE                 an operator-signed JWT listing keys
//
// The MEMORY resolver takes the two per-account UPDATE subjects only, as
// the reference's: an update of an account it has, kept in memory until
// a restart or reload. A request is handed to one goroutine (runResolver), which alone writes
// the store and applies changes, so the system user's reader never waits
// on a disk or on the other connections an update closes.
const (
	claimsUpdate        = "$SYS.REQ.CLAIMS.UPDATE"
	claimsLookup        = "$SYS.REQ.CLAIMS.LOOKUP"
	claimsList          = "$SYS.REQ.CLAIMS.LIST"
	claimsDelete        = "$SYS.REQ.CLAIMS.DELETE"
	accountClaimsUpdate = "$SYS.REQ.ACCOUNT.*.CLAIMS.UPDATE"
	accountClaimsLookup = "$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP"
	oldClaimsUpdate     = "$SYS.ACCOUNT.*.CLAIMS.UPDATE"
)

// claimsRequest is one request for the resolver goroutine.
type claimsRequest struct {
	subject, reply string
	body           []byte
}

// claimsQueue bounds the requests waiting for the resolver goroutine; one
// more is answered at once with an error.
const claimsQueue = 64

// claimUpdateResponse is the reference's ServerAPIClaimUpdateResponse.
type claimUpdateResponse struct {
	Server *sysServerInfo      `json:"server"`
	Data   *claimUpdateStatus  `json:"data,omitempty"`
	Error  *claimUpdateFailure `json:"error,omitempty"`
}

type claimUpdateStatus struct {
	Account string `json:"account,omitempty"`
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

type claimUpdateFailure struct {
	Account     string `json:"account,omitempty"`
	Code        int    `json:"code"`
	Description string `json:"description,omitempty"`
}

// startResolver arms the expiry of the first activation token to expire,
// subscribes the resolver's requests in the system account and starts
// the goroutine that serves them (none outside operator mode or without
// a system account).
func (s *Server) startResolver() {
	s.reloadMu.Lock()
	s.armActivationExpiry(s.liveOpts().trust)
	s.reloadMu.Unlock()
	if s.opts.trust == nil || !s.opts.hasSystemUsers() {
		return
	}
	subjects := []string{accountClaimsUpdate, oldClaimsUpdate} // MEMORY: updates of the accounts it has, in memory
	switch {
	case s.jwts != nil && s.jwts.cache: // lookups would go to other servers
		subjects = append(subjects, claimsUpdate, claimsList, claimsDelete)
	case s.jwts != nil:
		subjects = append(subjects, claimsUpdate, claimsLookup, claimsList, claimsDelete, accountClaimsLookup)
	}
	requests := make(chan claimsRequest, claimsQueue)
	enqueue := func(_ Rights, subject, reply []byte, hdr int, msg []byte) bool {
		r := claimsRequest{subject: string(subject), reply: string(reply), body: append([]byte(nil), requestBody(hdr, msg)...)}
		select {
		case requests <- r:
		default:
			s.claimsReply(r.reply, "", "jwt update resulted in error", fmt.Errorf("too many requests waiting"))
		}
		return true
	}
	for _, subject := range subjects {
		sub := &subscription{subject: subject, request: enqueue}
		if err := s.sysSubs.Insert(subject, "", sub); err != nil {
			s.log.Warn("resolver request not served", "subject", subject, "err", err)
			continue
		}
		s.sysServices = append(s.sysServices, sub)
	}
	s.wg.Add(1)
	go s.runResolver(requests)
}

// runResolver serves the resolver's requests until Shutdown.
func (s *Server) runResolver(requests <-chan claimsRequest) {
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case r := <-requests:
			s.serveClaims(r)
		}
	}
}

// serveClaims answers one request.
func (s *Server) serveClaims(r claimsRequest) {
	tokens := strings.Split(r.subject, ".")
	switch {
	case r.subject == claimsUpdate:
		s.updateClaims("", string(r.body), r.reply)
	case len(tokens) == 6 && tokens[5] == "UPDATE":
		s.updateClaims(tokens[3], string(r.body), r.reply)
	case len(tokens) == 5 && tokens[4] == "UPDATE":
		s.updateClaims(tokens[2], string(r.body), r.reply)
	case r.subject == claimsLookup:
		s.lookupClaims(strings.TrimSpace(string(r.body)), r.reply)
	case len(tokens) == 6 && tokens[5] == "LOOKUP":
		s.lookupClaims(tokens[3], r.reply)
	case r.subject == claimsList:
		if r.reply != "" {
			s.sysReply(s.sysSubs, []byte(r.reply), map[string]any{"server": s.envelope(), "data": s.jwts.keys()})
		}
	case r.subject == claimsDelete:
		s.deleteClaims(string(r.body), r.reply)
	}
}

// updateClaims stores and applies an account JWT pushed for key ("": the
// JWT's own), answering as the reference does, whose words differ by
// resolver (updateWords); bus also refuses a JWT that no trusted
// operator signed or that it cannot apply. MEMORY and cache update only
// the accounts they have: a cache on one server learns new accounts from
// its directory and resolver_preload only, as the reference's learns
// them from lookups.
func (s *Server) updateClaims(key, token, reply string) {
	w := s.updateWords()
	token = strings.TrimSpace(token)
	if s.jwts == nil && token == "" {
		s.claimsReply(reply, key, "jwt update error", fmt.Errorf("request body is empty"))
		return
	}
	ac, err := jwt.DecodeAccountClaims(token)
	switch {
	case err != nil && (key == "" || w.decodeNA):
		s.claimsReply(reply, "n/a", w.failed, err)
		return
	case err != nil:
		s.claimsReply(reply, key, w.failed, err)
		return
	case key != "" && ac.Subject != key:
		s.claimsReply(reply, key, w.failed, fmt.Errorf("subject does not match jwt content"))
		return
	}
	key = ac.Subject
	if _, known := s.liveOpts().Operator.Accounts[key]; w.knownOnly && !known {
		s.claimsReply(reply, key, w.skipped, nil)
		return
	}
	if err := validateClaims(ac); err != nil {
		s.claimsReply(reply, key, w.invalid, err)
		return
	}
	// An account JWT the operators do not trust (strict signing key
	// usage among the reasons) is refused, never stored.
	if _, err := s.liveOpts().trust.decodeAccount(key, token); err != nil {
		s.claimsReply(reply, key, w.failed, err)
		return
	}
	// Compile and apply before storing: a JWT bus would refuse at a
	// restart is never stored.
	if err := s.applyAccountJWTs(func(accounts map[string]string) { accounts[key] = token }); err != nil {
		s.claimsReply(reply, key, w.failed, err)
		return
	}
	if s.jwts != nil {
		evicted, err := s.jwts.save(key, token)
		if err != nil {
			s.claimsReply(reply, key, w.failed, err)
			return
		}
		if evicted != "" {
			s.log.Info("resolver cache full: the account JWT stored longest ago dropped from the store", "account", evicted)
		}
	}
	s.log.Info("account JWT updated", "account", key)
	s.claimsReply(reply, key, w.updated, nil)
}

// updateWords are the reference's answers to an update, by resolver.
type updateWords struct {
	failed, invalid, skipped, updated string
	knownOnly                         bool // only accounts it has are updated
	decodeNA                          bool // a JWT that cannot be decoded names account "n/a"
}

func (s *Server) updateWords() updateWords {
	switch {
	case s.jwts == nil:
		return updateWords{"jwt update resulted in error", "jwt update resulted in error", "jwt update skipped", "jwt updated", true, false}
	case s.jwts.cache:
		return updateWords{"jwt update cache resulted in error", "jwt update cache validation failed", "jwt update cache skipped", "jwt updated cache", true, false}
	}
	return updateWords{"jwt update resulted in error", "jwt validation failed", "", "jwt updated", false, true}
}

// lookupClaims answers with key's stored JWT, or an empty message when
// there is none, as the reference signals absence.
func (s *Server) lookupClaims(key, reply string) {
	if reply == "" {
		return
	}
	token, _ := s.jwts.load(key)
	s.routeIn(s.sysSubs, nil, []byte(reply), []byte(reply), nil, -1, []byte(token))
}

// deleteClaims deletes the accounts a delete request lists: a generic
// JWT the operator (or one of its signing keys) signed about itself,
// with "accounts" in its data, accepted only with allow_delete. The
// accounts' connections are closed.
func (s *Server) deleteClaims(token, reply string) {
	keys, subject, err := s.deleteRequest(token)
	if err != nil {
		s.claimsReply(reply, "", fmt.Sprintf("delete accounts request by %s failed", subject), err)
		return
	}
	err = s.applyAccountJWTs(func(accounts map[string]string) {
		for _, k := range keys {
			delete(accounts, k)
		}
	})
	if err != nil {
		s.claimsReply(reply, "", fmt.Sprintf("delete accounts request by %s failed", subject), err)
		return
	}
	var failed []string
	for _, k := range keys {
		if err := s.jwts.remove(k, s.opts.Operator.Resolver.HardDelete || s.jwts.cache); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		s.claimsReply(reply, "", fmt.Sprintf("deleted %d accounts, failed for %d", len(keys)-len(failed), len(failed)), fmt.Errorf("%s", strings.Join(failed, "\n")))
		return
	}
	s.log.Info("account JWTs deleted", "accounts", strings.Join(keys, ","))
	s.claimsReply(reply, "", fmt.Sprintf("deleted %d accounts", len(keys)), nil)
}

// deleteRequest checks a delete request as the reference does and
// returns the keys it lists and who signed it.
func (s *Server) deleteRequest(token string) ([]string, string, error) {
	gc, err := jwt.DecodeGeneric(strings.TrimSpace(token))
	if err != nil {
		return nil, "", err
	}
	subject := gc.Subject
	switch {
	case !s.opts.Operator.Resolver.AllowDelete && !s.jwts.cache: // a cache deletes, as the reference's
		return nil, subject, fmt.Errorf("delete must be enabled in server config")
	case gc.Subject != gc.Issuer:
		return nil, subject, fmt.Errorf("not self signed")
	case !s.liveOpts().trust.signers[gc.Issuer]:
		return nil, subject, fmt.Errorf("not trusted")
	}
	list, ok := gc.Data["accounts"].([]any)
	if !ok {
		return nil, subject, fmt.Errorf("malformed request")
	}
	keys := make([]string, 0, len(list))
	for _, e := range list {
		k, ok := e.(string)
		switch {
		case !ok || !nkeys.IsValidPublicAccountKey(k):
			return nil, subject, fmt.Errorf("malformed request")
		case k == s.liveOpts().trust.system:
			return nil, subject, fmt.Errorf("not allowed to delete system account")
		}
		keys = append(keys, k)
	}
	return keys, subject, nil
}

// claimsReply answers a resolver request as the reference's
// respondToUpdate: 200 and message, or 500 and "message - err".
func (s *Server) claimsReply(reply, account, message string, err error) {
	if err != nil {
		s.log.Warn("resolver request failed", "account", account, "reason", message+" - "+err.Error())
	}
	if reply == "" {
		return
	}
	resp := claimUpdateResponse{Server: s.envelope()}
	if err == nil {
		resp.Data = &claimUpdateStatus{Account: account, Code: http.StatusOK, Message: message}
	} else {
		resp.Error = &claimUpdateFailure{Account: account, Code: http.StatusInternalServerError, Description: fmt.Sprintf("%s - %v", message, err)}
	}
	data, mErr := json.Marshal(resp)
	if mErr != nil {
		s.log.Error("resolver answer not encoded", "err", mErr)
		return
	}
	s.routeIn(s.sysSubs, nil, []byte(reply), []byte(reply), nil, -1, data)
}

// withResolverStore is a reload's o with the resolver store's JWTs as
// its accounts (its preloaded ones stored first unless older); o as it
// is without a NATS resolver.
func (s *Server) withResolverStore(o Options) (Options, error) {
	if s.jwts == nil || o.Operator == nil || o.Operator.Resolver == nil {
		return o, nil
	}
	return withStoredAccounts(o, s.jwts)
}
