package jetstream

import (
	"bytes"
	"strconv"
	"time"
)

// Direct gets ($JS.API.DIRECT.GET.<stream>[.<subject>]) answer with the
// message itself and status headers, not JSON, and only for a stream
// with allow_direct: for any other the request is declined on the
// publisher's reader, so the client gets no responders, as from the
// reference, which subscribes only for such streams.

// directGet answers with the stored message itself, its headers followed
// by the Nats-Stream/Subject/Sequence/Time-Stamp ones nats.go requires.
func (svc *Service) directGet(r apiRequest, name, lastFor string) {
	st := svc.stream(name)
	if st == nil || !st.config().AllowDirect {
		return // declined already (servesDirect); a race with a delete or update
	}
	req := msgGetRequest{LastBySubj: lastFor}
	if lastFor == "" {
		if status := decodeDirectGet(r.body, &req); status != "" {
			svc.sh.core.Publish(r.reply, "", statusHeader(status), nil)
			return
		}
	}
	m, err := st.lookup(req)
	if err != nil {
		svc.sh.core.Publish(r.reply, "", statusHeader("404 Message Not Found"), nil)
		return
	}
	if !svc.mayRead(r.from, m.Subject) {
		svc.sh.core.Publish(r.reply, "", statusHeader("403 Permissions Violation"), nil)
		return
	}
	hdr := withHeader(m.Header, "Nats-Stream", st.name)
	hdr = withHeader(hdr, "Nats-Subject", m.Subject)
	hdr = withHeader(hdr, "Nats-Sequence", strconv.FormatUint(m.Seq, 10))
	hdr = withHeader(hdr, "Nats-Time-Stamp", m.Time.UTC().Format(time.RFC3339Nano))
	svc.sh.core.Publish(r.reply, "", hdr, m.Data)
}

// decodeDirectGet reads a direct get's body into req, or says which
// status refuses it, as the reference's: a request that asks for nothing
// is empty, one that asks for two kinds of message is bad.
func decodeDirectGet(body []byte, req *msgGetRequest) string {
	if len(body) == 0 {
		return "408 Empty Request"
	}
	if e := decodeBody(body, req); e != nil {
		return "408 Malformed Request"
	}
	switch {
	case req.Seq == 0 && req.LastBySubj == "" && req.NextBySubj == "":
		return "408 Empty Request"
	case req.LastBySubj != "" && (req.Seq > 0 || req.NextBySubj != ""):
		return "408 Bad Request"
	}
	return ""
}

// servesDirect reports whether the stream named at the start of name (a
// direct get subject's tail) exists and allows direct gets. It runs on
// the publisher's reader, so it only looks.
func (svc *Service) servesDirect(name []byte) bool {
	if i := bytes.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	st := svc.stream(string(name))
	if st == nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cfg.AllowDirect
}
