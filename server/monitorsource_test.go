package server

import (
	"context"
	"errors"
	"testing"
)

// strangerRights are rights the server did not hand out.
type strangerRights struct{}

func (strangerRights) User() string           { return "" }
func (strangerRights) MayPublish(string) bool { return true }

// The adapter takes back only the Rights it handed out: a request with
// any other value is refused before it reaches a handler, and a refused
// login is a nil Rights (not a typed nil the monitor could use).
func TestMonitorSourceRights(t *testing.T) {
	t.Parallel()
	s, err := New(Options{Authorization: Authorization{Users: []User{{Name: "ann", Password: "pw"}}}})
	if err != nil {
		t.Fatal(err)
	}
	src := monitorSource{s}
	if !src.AuthRequired() {
		t.Fatal("authorization configured, not required")
	}
	if r, ok := src.Authenticate("ann", "wrong"); ok || r != nil {
		t.Fatalf("wrong password: %v, %v", r, ok)
	}
	r, ok := src.Authenticate("ann", "pw")
	if !ok || r.User() != "ann" {
		t.Fatalf("login: %v, %v", r, ok)
	}
	if _, err := src.Request(context.Background(), strangerRights{}, "$JS.API.INFO", []byte("{}")); !errors.Is(err, errForeignRights) {
		t.Fatalf("foreign rights: %v", err)
	}
	if _, err := src.Request(context.Background(), nil, "$JS.API.INFO", []byte("{}")); !errors.Is(err, errForeignRights) {
		t.Fatalf("nil rights: %v", err)
	}
	// The user's own rights pass the adapter; nothing serves the API
	// here (JetStream is off).
	if _, err := src.Request(context.Background(), r, "$JS.API.INFO", []byte("{}")); !errors.Is(err, errNoResponder) {
		t.Fatalf("ann's request: %v", err)
	}
}
