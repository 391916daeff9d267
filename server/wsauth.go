package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// How WebSocket clients authenticate. They meet the same users and
// permissions as TCP clients, with the websocket block's overrides, as
// in the reference:
//
//   - Its authorization (a user and password, or a token, and a timeout)
//     replaces the top-level single user or token for WebSocket clients;
//     with it, only the block's no_auth_user applies to them. It cannot
//     be set beside a users list.
//   - Its no_auth_user (one of the users) is who a WebSocket client
//     without credentials is, in place of the top-level one.
//   - Cookies named by user_cookie, pass_cookie and token_cookie, sent
//     with the upgrade, stand in for CONNECT's user, pass and auth_token
//     when it has none: a page's login can set them where its script
//     cannot see them.
//
// WebSocket clients never map TLS certificates to users, so their
// authenticator has no verify_and_map either (the reference takes the
// block's own tls_map, which bus does not have).

// WebSocketAuth is the websocket block's authorization.
type WebSocketAuth struct {
	User     string
	Password string
	Token    string
	// Timeout bounds a WebSocket client's CONNECT in place of
	// Authorization.Timeout; 0 keeps that.
	Timeout time.Duration
}

func (a WebSocketAuth) set() bool { return a.User != "" || a.Token != "" }

// validateWebSocketAuth checks the block's authorization against the
// top-level one, in the reference's words.
func (o Options) validateWebSocketAuth() error {
	w, a := o.WebSocket, o.Authorization
	if !w.enabled() {
		return nil
	}
	switch {
	case w.Authorization.Timeout < 0:
		return errors.New("server: websocket authorization timeout must not be negative")
	case w.Authorization.User != "" && len(a.Users) > 0:
		return errors.New("server: websocket authentication username not compatible with presence of users/nkeys")
	case w.Authorization.Token != "" && len(a.Users) > 0:
		return errors.New("server: websocket authentication token not compatible with presence of users/nkeys")
	case w.Authorization.Token != "" && (w.Authorization.User != "" || w.Authorization.Password != ""):
		return errors.New("server: websocket authorization: cannot have a user/pass and token")
	case w.Authorization.Password != "" && w.Authorization.User == "":
		return errors.New("server: websocket authorization: password without a user")
	case w.JWTCookie != "" && o.Operator == nil:
		return fmt.Errorf("server: websocket jwt_cookie %q needs operator mode: a user JWT is only checked against trusted operators", w.JWTCookie)
	}
	if w.NoAuthUser != "" {
		for _, u := range a.Users {
			if u.label() == w.NoAuthUser {
				return nil
			}
		}
		return fmt.Errorf("server: websocket no_auth_user %q is not one of the users", w.NoAuthUser)
	}
	return nil
}

// wsAuthorization is the authorization WebSocket clients meet.
func (o Options) wsAuthorization() Authorization {
	w, a := o.WebSocket, o.Authorization
	if w.Authorization.set() {
		a.User, a.Password, a.Token = w.Authorization.User, w.Authorization.Password, w.Authorization.Token
		a.NoAuthUser = w.NoAuthUser // the top-level one is not the block's
	} else if w.NoAuthUser != "" {
		a.NoAuthUser = w.NoAuthUser
	}
	if w.Authorization.Timeout > 0 {
		a.Timeout = w.Authorization.Timeout
	}
	return a
}

// newAuthenticators compiles who may connect: the client port's
// authenticator and, with a websocket listener, the WebSocket clients'
// (the block's own authorization, with every account's users).
func (s *Server) newAuthenticators(o *Options, set accountSet) (tcp, ws *authenticator) {
	tcp = s.newAuthenticatorFor(o, o.Authorization, o.TLS.VerifyAndMap, set)
	if o.WebSocket.enabled() {
		ws = s.newAuthenticatorFor(o, o.wsAuthorization(), false, set)
	}
	return tcp, ws
}

// auth is the authenticator the connection meets.
func (c *conn) auth() *authenticator {
	if c.mqtt != nil {
		if a := c.srv.mqttAuthn.Load(); a != nil {
			return a
		}
	}
	if c.ws {
		if a := c.srv.wsAuthn.Load(); a != nil {
			return a
		}
	}
	return c.srv.auth()
}

// authTimeout bounds the connection's CONNECT.
func (c *conn) authTimeout() time.Duration {
	live := c.srv.liveOpts()
	if c.mqtt != nil {
		return live.mqttAuthTimeout()
	}
	if c.ws {
		return live.wsAuthorization().Timeout
	}
	return live.Authorization.Timeout
}

// wsCookies are the credentials the upgrade's cookies carry.
func (w WebSocketOptions) cookies(r *http.Request) credentials {
	var cr credentials
	for _, ck := range r.Cookies() {
		switch ck.Name {
		case "":
		case w.UserCookie:
			cr.User = ck.Value
		case w.PassCookie:
			cr.Pass = ck.Value
		case w.TokenCookie:
			cr.Token = ck.Value
		case w.JWTCookie:
			cr.JWT = ck.Value
		}
	}
	return cr
}

// withCookies fills what CONNECT left empty from the upgrade's cookies.
func (c *conn) withCookies(cr credentials) credentials {
	k := c.wsCookies
	if cr.User == "" {
		cr.User = k.User
	}
	if cr.Pass == "" {
		cr.Pass = k.Pass
	}
	if cr.Token == "" {
		cr.Token = k.Token
	}
	if cr.JWT == "" {
		cr.JWT = k.JWT
	}
	return cr
}
