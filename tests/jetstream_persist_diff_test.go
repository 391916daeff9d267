package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// persistModeScenario: persist_mode "async" (API level 2) is accepted on
// a file stream and echoed, "default" is not echoed, and the reference's
// refusals: memory storage, atomic batches, a change in an update, a
// value it does not know. A publish to an async stream is acked.
func persistModeScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	req := func(subject, body string) {
		resp, err := nc.Request(subject, []byte(body), 5*time.Second)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", subject, err))
			return
		}
		var r struct {
			Config *struct {
				PersistMode string `json:"persist_mode"`
			} `json:"config"`
			Error *struct {
				ErrCode     int    `json:"err_code"`
				Description string `json:"description"`
			} `json:"error"`
			Seq uint64 `json:"seq"`
		}
		_ = json.Unmarshal(resp.Data, &r)
		switch {
		case r.Error != nil && r.Error.ErrCode == 10025: // the JSON decoder's words differ
			out = append(out, fmt.Sprintf("%s %s: %d", subject, body, r.Error.ErrCode))
		case r.Error != nil:
			out = append(out, fmt.Sprintf("%s %s: %d %s", subject, body, r.Error.ErrCode, r.Error.Description))
		case r.Config != nil:
			out = append(out, fmt.Sprintf("%s %s: ok, persist_mode %q", subject, body, r.Config.PersistMode))
		default:
			out = append(out, fmt.Sprintf("%s: ack seq %d", subject, r.Seq))
		}
	}
	req("$JS.API.STREAM.CREATE.A", `{"name":"A","subjects":["a"],"persist_mode":"async"}`)
	req("$JS.API.STREAM.CREATE.D", `{"name":"D","subjects":["d"],"persist_mode":"default"}`)
	req("$JS.API.STREAM.CREATE.M", `{"name":"M","subjects":["m"],"persist_mode":"async","storage":"memory"}`)
	req("$JS.API.STREAM.CREATE.B", `{"name":"B","subjects":["b"],"persist_mode":"async","allow_atomic":true}`)
	req("$JS.API.STREAM.CREATE.X", `{"name":"X","subjects":["x"],"persist_mode":"fast"}`)
	req("$JS.API.STREAM.UPDATE.A", `{"name":"A","subjects":["a"]}`)
	req("$JS.API.STREAM.UPDATE.D", `{"name":"D","subjects":["d"],"persist_mode":"async"}`)
	req("$JS.API.STREAM.UPDATE.A", `{"name":"A","subjects":["a","a2"],"persist_mode":"async"}`)
	req("a", "hello")

	// A fast batch (API level 4) to a stream that does not allow it.
	reply := nc.NewRespInbox() + ".uuid1.10.fail.1.0.$FI"
	sub, err := nc.SubscribeSync(reply)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishMsg(&nats.Msg{Subject: "d", Reply: reply, Data: []byte("fast")}); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil {
		out = append(out, fmt.Sprintf("fast batch: %v", err))
	} else {
		var r struct {
			Error *struct {
				ErrCode int `json:"err_code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(m.Data, &r)
		out = append(out, fmt.Sprintf("fast batch: error %v", r.Error != nil && r.Error.ErrCode == 10205))
	}
	return out
}

func TestPersistModeMatchesReference(t *testing.T) {
	t.Parallel()
	ref := persistModeScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := persistModeScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
