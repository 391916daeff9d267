package jetstream

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nuid"
)

// API audit advisories, as the reference publishes them: for every API
// request it answers, $JS.EVENT.ADVISORY.API gets the request's subject
// and body and the response sent. They cost nothing while nobody
// listens: the lane checks for interest once per request, and only then
// notes the request where respond can find it (by its reply subject,
// which is the client's own inbox).
//
// The client is described by what this layer knows of it: the account
// and, with authorization on, the user (the reference also names the
// connection's host, id, name and client library).

const auditSubject = "$JS.EVENT.ADVISORY.API"

type apiAudit struct {
	Type     string      `json:"type"`
	ID       string      `json:"id"`
	Time     time.Time   `json:"timestamp"`
	Server   string      `json:"server"`
	Client   auditClient `json:"client"`
	Subject  string      `json:"subject"`
	Request  string      `json:"request,omitempty"`
	Response string      `json:"response"`
	Domain   string      `json:"domain,omitempty"`
}

type auditClient struct {
	Account string `json:"acc"`
	User    string `json:"user,omitempty"`
}

// noAudit is auditStart's answer while nobody listens.
func noAudit() {}

// auditStart notes r for respond to audit, if anyone listens; the
// returned func forgets it once r is handled. Only then is r copied to
// the heap: unaudited requests allocate nothing here.
func (svc *Service) auditStart(r apiRequest) func() {
	if r.reply == "" || !svc.sh.core.HasInterest(auditSubject) {
		return noAudit
	}
	noted := r
	svc.auditing.Store(r.reply, &noted)
	return func() { svc.auditing.Delete(noted.reply) }
}

// audit publishes the advisory for the response b sent to reply, if
// reply belongs to a request being audited.
func (svc *Service) audit(reply string, b []byte) {
	v, ok := svc.auditing.Load(reply)
	if !ok {
		return
	}
	r := v.(*apiRequest)
	a := apiAudit{
		Type: "io.nats.jetstream.advisory.v1.api_audit", ID: nuid.Next(), Time: svc.sh.now().UTC(),
		Server: svc.sh.server, Client: auditClient{Account: "$G"},
		Subject: r.subject, Request: string(r.body), Response: string(b), Domain: svc.sh.domain,
	}
	if r.from != nil {
		a.Client.User = r.from.User()
	}
	out, err := json.Marshal(a)
	if err != nil {
		return
	}
	svc.sh.core.Publish(auditSubject, "", nil, out)
}
