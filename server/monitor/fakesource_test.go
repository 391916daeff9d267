package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSource is a Source without a server: fixed counters and JetStream
// snapshot, a user table, and an API whose answers a test scripts. It
// records every request the monitor makes.
type fakeSource struct {
	counters Counters
	js       *JetStreamMetrics // nil: JetStream off
	conns    []*ConnInfo       // the open connections /connz lists, in cid order
	connzErr error             // what Connz fails with, if anything
	users    map[string]fakeUser
	// answer replies to an API request; nil answers every request with
	// the no-responder error.
	answer func(subject string, body map[string]any) (any, error)

	mu       sync.Mutex // guards requests
	requests []fakeRequest
}

// fakeUser is a configured user: a password and the subjects (API
// subjects, literal) it may publish to; nil may publish anything.
type fakeUser struct {
	password string
	publish  []string
}

// fakeRights are what Authenticate hands out.
type fakeRights struct {
	name    string
	publish []string
	server  bool
}

func (r fakeRights) User() string { return r.name }
func (r fakeRights) MayPublish(subject string) bool {
	if r.publish == nil {
		return true
	}
	for _, s := range r.publish {
		if s == subject {
			return true
		}
	}
	return false
}

// fakeRequest is one request the monitor sent: as whom, where, what.
type fakeRequest struct {
	user    string
	server  bool // with ServerRights
	subject string
	body    map[string]any
}

var errFakeNoResponder = errors.New("fake: nothing answers")

func (f *fakeSource) Varz() Varz                         { return Varz{Identity: Identity{ServerID: f.counters.ServerID}} }
func (f *fakeSource) Subsz(SubszOptions) (*Subsz, error) { return &Subsz{}, nil }
func (f *fakeSource) Healthz(HealthzOptions) (HealthStatus, int) {
	return HealthStatus{Status: "ok"}, 200
}
func (f *fakeSource) Leafz(bool) Leafz                   { return Leafz{} }
func (f *fakeSource) Accountz(string) (*Accountz, error) { return &Accountz{}, nil }
func (f *fakeSource) AccountStatz(bool) *AccountStatz    { return &AccountStatz{} }
func (f *fakeSource) Routez() Routez                     { return Routez{} }
func (f *fakeSource) Gatewayz() Gatewayz                 { return Gatewayz{} }
func (f *fakeSource) Jsz(JszOptions) any                 { return map[string]any{} }
func (f *fakeSource) Counters() Counters                 { return f.counters }
func (f *fakeSource) AuthRequired() bool                 { return f.users != nil }
func (f *fakeSource) ServerRights() Rights               { return fakeRights{server: true} }

// Connz lists the fake's connections up to o's limit, as the server
// pages them; it knows open connections only.
func (f *fakeSource) Connz(o ConnzOptions) (*Connz, error) {
	if f.connzErr != nil {
		return nil, f.connzErr
	}
	cz := &Connz{Total: len(f.conns), Conns: []*ConnInfo{}}
	if o.State == ConnClosed {
		cz.Total = 0
		return cz, nil
	}
	n := len(f.conns)
	if o.Limit > 0 {
		n = min(n, o.Limit)
	}
	cz.Conns = append(cz.Conns, f.conns[:n]...)
	cz.NumConns = n
	return cz, nil
}

func (f *fakeSource) JetStream() *JetStreamMetrics {
	if f.js == nil {
		return nil
	}
	cp := *f.js
	return &cp
}

func (f *fakeSource) Authenticate(user, pass string) (Rights, bool) {
	if f.users == nil {
		return fakeRights{}, true
	}
	u, ok := f.users[user]
	if !ok || u.password != pass {
		return nil, false
	}
	return fakeRights{name: user, publish: u.publish}, true
}

func (f *fakeSource) Request(ctx context.Context, from Rights, subject string, body []byte) ([]byte, error) {
	r, ok := from.(fakeRights)
	if !ok {
		return nil, errors.New("fake: rights not handed out by the source")
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{user: r.name, server: r.server, subject: subject, body: req})
	f.mu.Unlock()
	if f.answer == nil {
		return nil, errFakeNoResponder
	}
	v, err := f.answer(subject, req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func (f *fakeSource) sent() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.requests...)
}

// apiError is an API answer with an error, as JetStream writes it.
func apiError(code, errCode int, description string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "err_code": errCode, "description": description}}
}

// newFakeMonitor is a monitor over src that is never started: tests
// call its handler directly.
func newFakeMonitor(t *testing.T, src *fakeSource, httpAuth bool) *Server {
	t.Helper()
	m, err := New(Options{Source: src, HTTPAuth: httpAuth})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// call serves one request: method, path, optional body, Basic
// credentials when user is not "", and headers as "Key: value".
func call(t *testing.T, m *Server, method, path, body, user, pass string, headers ...string) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if user != "" {
		r.SetBasicAuth(user, pass)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, r)
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// decode unmarshals b into v, failing the test with b on error.
func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}

// errorText is the description of a dashboard error answer.
func errorText(t *testing.T, b []byte) string {
	t.Helper()
	var e struct {
		Error struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	decode(t, b, &e)
	return e.Error.Description
}

// sampleJetStream has stream S (file, two consumers) and M (memory, no
// consumers).
func sampleJetStream() *JetStreamMetrics {
	at := time.UnixMilli(1_700_000_000_000)
	return &JetStreamMetrics{
		APITotal: 9, APIErrors: 2, DeadLettered: 3, Damaged: 1, MaxMemory: 1 << 30, MaxStorage: 1 << 40,
		Streams: []StreamMetrics{
			{Name: "M", Memory: true, Msgs: 1, Bytes: 10},
			{
				Name: "S", Msgs: 5, Bytes: 500, FirstSeq: 1, LastSeq: 5, FirstTime: at, LastTime: at.Add(time.Second),
				Accepted: 5, DeadLetterQueue: true,
				Consumers: []ConsumerMetrics{
					{Name: "a", NumPending: 4, NumAckPending: 1, DeadLettered: 2, Delivered: SeqPair{Stream: 1}, LastDelivered: at},
					{Name: "b", NumPending: 1, DeadLettered: 1, Delivered: SeqPair{Stream: 4}, AckFloor: SeqPair{Stream: 3}, LastAcked: at.Add(time.Minute)},
				},
			},
		},
	}
}
