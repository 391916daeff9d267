package monitor

import (
	"fmt"
	"net/http"
	"strings"
)

// The handlers of the nats-server endpoints: each reads its query,
// asks Source for the document and writes it as the reference does.

func (m *Server) serveVarz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, m.src.Varz())
}

func (m *Server) serveConnz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := ConnzOptions{
		Sort: q.str("sort"), Auth: q.bool("auth"), Offset: q.int("offset"), Limit: q.int("limit"),
		CID: q.uint64("cid"), User: q.str("user"), Account: q.str("acc"), MQTTClient: q.str("mqtt_client"),
	}
	o.Subs, o.SubsDetail = q.subs()
	switch state := strings.ToLower(q.str("state")); state {
	case "", "open":
	case "closed":
		o.State = ConnClosed
	case "all", "any":
		o.State = ConnAll
	default:
		q.err = fmt.Errorf("monitoring: state=%q is not open, closed or all", state)
	}
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	c, err := m.src.Connz(o)
	if err != nil {
		badRequest(w, err)
		return
	}
	writeJSON(w, c)
}

func (m *Server) serveSubsz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := SubszOptions{Subs: q.bool("subs"), Offset: q.int("offset"), Limit: q.int("limit"), Test: q.str("test"), Account: q.str("acc")}
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	sz, err := m.src.Subsz(o)
	if err != nil {
		badRequest(w, err)
		return
	}
	writeJSON(w, sz)
}

func (m *Server) serveHealthz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := HealthzOptions{
		JSEnabledOnly: q.bool("js-enabled-only") || q.bool("js-enabled"),
		JSServerOnly:  q.bool("js-server-only"),
		Details:       q.bool("details"),
	}
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	h, code := m.src.Healthz(o)
	writeJSONStatus(w, code, h)
}

func (m *Server) serveLeafz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	subs := q.bool("subs")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, m.src.Leafz(subs))
}

func (m *Server) serveAccountz(w http.ResponseWriter, r *http.Request) {
	a, err := m.src.Accountz(r.URL.Query().Get("acc"))
	if err != nil {
		badRequest(w, err)
		return
	}
	writeJSON(w, a)
}

func (m *Server) serveAccstatz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	unused := q.bool("unused")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, m.src.AccountStatz(unused))
}

func (m *Server) serveRoutez(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, m.src.Routez())
}

func (m *Server) serveGatewayz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, m.src.Gatewayz())
}

func (m *Server) serveJsz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	o := JszOptions{
		Account: q.str("acc"), Accounts: q.bool("accounts"), Streams: q.bool("streams"),
		Consumers: q.bool("consumers"), Config: q.bool("config"), Offset: q.int("offset"), Limit: q.int("limit"),
		Raft: q.bool("raft"),
	}
	// Accepted and ignored: bus is one server, which leads everything,
	// and has no direct consumers.
	_, _, _ = q.bool("leader-only"), q.bool("stream-leader-only"), q.bool("direct-consumers")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, m.src.Jsz(o))
}
