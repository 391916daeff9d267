package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// apiCountsScenario reads $JS.API.INFO's api.total and api.errors after
// each kind of request: an answer is counted once it is sent, so an INFO
// does not count itself; an error counts in both; a request that gets
// no API answer (an unknown subject, a direct get, a pull request) is not
// counted. nats.go's TestAccountInfo/server_with_default_values expects
// the first INFO to say 0. Issue 28.
func apiCountsScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	counts := func(step string) {
		var info struct {
			API struct {
				Total  int `json:"total"`
				Errors int `json:"errors"`
			} `json:"api"`
		}
		if err := json.Unmarshal(mustRequest(t, nc, "$JS.API.INFO", ""), &info); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("after %s: total %d errors %d", step, info.API.Total, info.API.Errors))
	}
	counts("nothing")
	counts("one info")
	mustRequest(t, nc, "$JS.API.STREAM.INFO.MISSING", "")
	counts("an error")
	mustRequest(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":"S","subjects":["s.>"],"allow_direct":true}`)
	mustRequest(t, nc, "$JS.API.STREAM.CREATE.S", `{"name":`)
	counts("a create and a bad create")
	if _, err := nc.Request("s.1", []byte("x"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, nc, "$JS.API.DIRECT.GET.S", `{"seq":1}`)
	counts("a publish and a direct get")
	if err := nc.Publish("$JS.API.NO.SUCH.THING", nil); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	counts("an unknown subject")
	mustRequest(t, nc, "$JS.API.CONSUMER.CREATE.S.C", `{"stream_name":"S","config":{"name":"C","ack_policy":"none"}}`)
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.S.C", inbox, []byte(`{"batch":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.NextMsg(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	counts("a consumer create and a pull")
	return out
}

func TestAPICountsMatchReference(t *testing.T) {
	t.Parallel()
	ref := apiCountsScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := apiCountsScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
