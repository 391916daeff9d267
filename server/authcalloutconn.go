package server

import (
	"bytes"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// consultCallout lets the auth callout decide about a client whose
// configured authentication gave id or fail, when the callout is on and
// decides about it (callout.decides); otherwise, and for leaf links, it
// returns them as given. A user that ends up in the callout account may
// not publish authorization requests, as in the reference. In operator
// mode the callout is the user's account JWT's (authcalloutoperator.go).
//
// It runs on the connection's reader, which waits for the service's
// answer at most the auth timeout: only this client waits.
func (c *conn) consultCallout(a *authenticator, cr credentials, o *connectOptions, id *identity, fail *authFailure) (*identity, *authFailure) {
	if c.leaf != nil {
		return id, fail
	}
	if a.jwt != nil {
		return c.consultAccountCallout(a.jwt, cr, o, id, fail)
	}
	co := a.callout
	if co == nil {
		return id, fail
	}
	if co.decides(id, fail, a.noAuth, c.srv.accountNameOf) {
		got, err := c.configCallout(co, cr, o)
		if err != nil {
			return nil, &authFailure{user: rawAuthUser(cr), reason: titleCase(err.Error())}
		}
		id, fail = got, nil
	}
	if id != nil && c.srv.accountNameOf(id) == co.cfg.Account {
		id = denyAuthRequests(id)
	}
	return id, fail
}

// denyAuthRequests is id, not allowed to publish authorization requests.
func denyAuthRequests(id *identity) *identity {
	denied := *id
	denied.perms = withPublishDeny(id.perms, authCalloutSubject)
	return &denied
}

// accountNameOf is the name of the account id connects into.
func (s *Server) accountNameOf(id *identity) string { return s.accountFor(id).name }

// configCallout asks the configured callout about the client and turns
// its answer into the identity the client connects as.
func (c *conn) configCallout(co *callout, cr credentials, o *connectOptions) (*identity, error) {
	s := c.srv
	acc, _, ok := s.accountNamed(co.cfg.Account)
	if !ok {
		return nil, fmt.Errorf("no valid account %q for auth callout request: account missing", co.cfg.Account)
	}
	if acc == nil {
		acc = s.global
	}
	issuer := co.cfg.Issuer
	to := calloutTarget{acc: acc, requestSubject: issuer, xkey: co.cfg.XKey,
		signedBy: func(key string) bool { return key == issuer }}
	uc, _, err := c.runCallout(to, cr, o)
	if err != nil {
		return nil, err
	}
	if err := configUser(uc, issuer, co.cfg.Account); err != nil {
		return nil, err
	}
	return s.calloutIdentity(co, uc)
}

// calloutTarget is where one authorization request goes and who may
// answer it.
type calloutTarget struct {
	acc            *account // the callout account, where the request is sent
	requestSubject string   // the request JWT's subject: the issuer, or the account key in operator mode
	xkey           string   // the service's curve key; "": in the clear
	signedBy       func(key string) bool
	accountKey     string // operator mode: see calloutExchange
}

// runCallout sends the client's authorization request to the callout
// service in to.acc and waits for its answer: the user JWT's claims and
// the JWT, or why the client is refused.
func (c *conn) runCallout(to calloutTarget, cr credentials, o *connectOptions) (*jwt.UserClaims, string, error) {
	s := c.srv
	// A fresh user key per request: the response must be for it, so an
	// answer recorded earlier cannot be replayed.
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", fmt.Errorf("auth callout: user key: %w", err)
	}
	userKey, _ := ukp.PublicKey()
	x := &calloutExchange{serverID: s.id, userKey: userKey, account: to.acc.name, signedBy: to.signedBy, accountKey: to.accountKey}
	if to.xkey != "" {
		x.xkp, x.serviceXKey = s.keys.xkp, to.xkey
	}
	timeout := c.authTimeout()
	req, hdr, err := c.authorizationRequest(to.requestSubject, x, cr, o, timeout)
	if err != nil {
		return nil, "", err
	}
	inbox := "_INBOX." + inboxToken()
	answers := make(chan []byte, 1)
	sub, err := s.subscribeIn(to.acc, &subscription{subject: inbox, handler: func(_, _ []byte, hdr int, msg []byte) bool {
		if hdr >= 0 {
			msg = msg[hdr:]
		}
		select {
		case answers <- bytes.Clone(msg):
		default: // the first answer counts
		}
		return true
	}})
	if err != nil {
		return nil, "", fmt.Errorf("error setting up reply subscription for auth request: %v", err)
	}
	defer s.unsubscribeIn(to.acc, sub)
	if (jetstreamCore{s, to.acc}).Publish(authCalloutSubject, inbox, hdr, req) == 0 {
		// The reference waits out the timeout; nobody can answer.
		return nil, "", fmt.Errorf("no auth callout service subscribes to %s on account %q", authCalloutSubject, to.acc.name)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var answer []byte
	select {
	case answer = <-answers:
	case <-timer.C:
		return nil, "", fmt.Errorf("%w on account %q", errCalloutTimeout, to.acc.name)
	case <-s.quit:
		return nil, "", ErrServerClosed
	}
	return x.decodeResponse(answer)
}

// authorizationRequest is the signed request JWT for this client (sealed
// to the service's xkey when it has one) and the header that goes with
// it, filled as the reference fills it.
func (c *conn) authorizationRequest(subject string, x *calloutExchange, cr credentials, o *connectOptions, timeout time.Duration) (req, hdr []byte, err error) {
	s := c.srv
	claim := jwt.NewAuthorizationRequestClaims(subject)
	claim.Audience = authRequestAudience
	claim.UserNkey = x.userKey
	host, _ := s.infoHostPort()
	claim.Server = jwt.ServerID{Name: s.name, Host: host, ID: s.id, Version: Version}
	if x.xkp != nil {
		claim.Server.XKey = s.keys.xkeyPublic
	}
	claim.Expires = time.Now().Add(timeout).UTC().Unix()
	claim.ClientInformation = jwt.ClientInformation{
		Host: c.ip, ID: c.id, User: rawAuthUser(cr), Name: o.Name, Kind: "Client", Type: c.clientTypeName(),
	}
	claim.ConnectOptions = jwt.ConnectOptions{
		JWT: cr.JWT, Nkey: cr.Nkey, SignedNonce: cr.Sig, Token: cr.Token, Username: cr.User, Password: cr.Pass,
		Name: o.Name, Lang: o.Lang, Version: o.Version, Protocol: o.Protocol,
	}
	if cr.Sig != "" {
		claim.ClientInformation.Nonce = c.nonce
	}
	claim.TLS = c.clientTLS()
	token, err := claim.Encode(s.keys.kp)
	if err != nil {
		return nil, nil, fmt.Errorf("error encoding auth request claim on account %q: %v", x.account, err)
	}
	req = []byte(token)
	if x.xkp != nil {
		if req, err = x.xkp.Seal(req, x.serviceXKey); err != nil {
			return nil, nil, fmt.Errorf("error encrypting auth request claim on account %q: %v", x.account, err)
		}
		hdr = []byte("NATS/1.0\r\n" + authXKeyHeader + ": " + s.keys.xkeyPublic + "\r\n\r\n")
	}
	return req, hdr, nil
}

// rawAuthUser is who the client says it is, as the reference's request
// names it: its nkey, its user name, or a redacted token.
func rawAuthUser(cr credentials) string {
	switch {
	case cr.Nkey != "":
		return cr.Nkey
	case cr.User != "":
		return cr.User
	case cr.Token != "":
		return "[REDACTED]"
	}
	return ""
}

// clientTypeName is the reference's name for how the client speaks.
func (c *conn) clientTypeName() string {
	if c.ws {
		return "websocket"
	}
	return "nats"
}

// clientTLS describes the client's TLS session: its verified chains, or
// the certificates it sent when none was verified; nil without TLS.
func (c *conn) clientTLS() *jwt.ClientTLS {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	cs := tc.ConnectionState()
	ct := &jwt.ClientTLS{Version: tlsVersionName(cs.Version), Cipher: tls.CipherSuiteName(cs.CipherSuite)}
	encode := func(raw []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: raw}))
	}
	for _, chain := range cs.VerifiedChains {
		var certs []string
		for _, cert := range chain {
			certs = append(certs, encode(cert.Raw))
		}
		ct.VerifiedChains = append(ct.VerifiedChains, certs)
	}
	if len(ct.VerifiedChains) == 0 {
		for _, cert := range cs.PeerCertificates {
			ct.Certs = append(ct.Certs, encode(cert.Raw))
		}
	}
	return ct
}
