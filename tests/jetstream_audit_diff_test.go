package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// auditScenario: with a subscriber on $JS.EVENT.ADVISORY.API, each API
// request answered is audited with its subject, request and response.
func auditScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.API")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range []struct{ subject, body string }{
		{"$JS.API.STREAM.CREATE.AU", `{"name":"AU","subjects":["au"]}`},
		{"$JS.API.STREAM.INFO.NOPE", ""},
		{"$JS.API.CONSUMER.CREATE.AU.C", `{"stream_name":"AU","config":{"durable_name":"C","ack_policy":"explicit"}}`},
		{"$JS.API.STREAM.DELETE.AU", ""},
	} {
		if _, err := nc.Request(r.subject, []byte(r.body), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, r.subject+": no audit: "+err.Error())
			continue
		}
		var a struct {
			Type     string `json:"type"`
			Subject  string `json:"subject"`
			Request  string `json:"request"`
			Response string `json:"response"`
			Client   struct {
				Account string `json:"acc"`
			} `json:"client"`
		}
		if err := json.Unmarshal(m.Data, &a); err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Type  string `json:"type"`
			Error *struct {
				ErrCode int `json:"err_code"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(a.Response), &resp)
		code := 0
		if resp.Error != nil {
			code = resp.Error.ErrCode
		}
		out = append(out, fmt.Sprintf("%s: %s %s request %q response %s %d, account %s", r.subject, a.Type, a.Subject, a.Request, resp.Type, code, a.Client.Account))
	}
	return out
}

func TestAPIAuditAdvisoriesMatchReference(t *testing.T) {
	t.Parallel()
	ref := auditScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := auditScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	for _, l := range ref {
		t.Log(l)
	}
	sameOutcomes(t, ref, got)
}
