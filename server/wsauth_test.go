package server

import (
	"strings"
	"testing"
)

// jwt_cookie reads a user JWT, which only operator mode can verify: the
// reference refuses it without trusted operators, and so does bus.
func TestWebSocketJWTCookieNeedsOperatorMode(t *testing.T) {
	o := Options{WebSocket: WebSocketOptions{Port: -1, NoTLS: true, JWTCookie: "nats_jwt"}}
	err := o.validateWebSocketAuth()
	if err == nil || !strings.Contains(err.Error(), "jwt_cookie") || !strings.Contains(err.Error(), "operator") {
		t.Fatalf("got %v, want a refusal naming jwt_cookie and operator mode", err)
	}
	o.Operator = &Operator{}
	if err := o.validateWebSocketAuth(); err != nil {
		t.Fatalf("with an operator: %v", err)
	}
}
