package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// apiScenario is one raw JetStream API request. Bus and the reference
// must answer alike: both or neither, with the same type, error code and
// err_code (and the same description where words says so).
type apiScenario struct {
	name, subject, body string
	words               bool // compare error descriptions too
}

var apiScenarios = []apiScenario{
	{"account info", "$JS.API.INFO", "", false},
	{"create with empty body", "$JS.API.STREAM.CREATE.X", "", true},
	{"create with other name", "$JS.API.STREAM.CREATE.X", `{"name":"Y","subjects":["x.>"]}`, true},
	{"create", "$JS.API.STREAM.CREATE.X", `{"name":"X","subjects":["x.>"]}`, true},
	{"create again is idempotent", "$JS.API.STREAM.CREATE.X", `{"name":"X","subjects":["x.>"]}`, true},
	{"create with other config", "$JS.API.STREAM.CREATE.X", `{"name":"X","subjects":["y"]}`, true},
	{"overlapping subjects", "$JS.API.STREAM.CREATE.Z", `{"name":"Z","subjects":["x.a"]}`, true},
	{"bad json", "$JS.API.STREAM.CREATE.B", `{"name":`, false},
	{"replicas", "$JS.API.STREAM.CREATE.R", `{"name":"R","num_replicas":3}`, true},
	{"bad subject", "$JS.API.STREAM.CREATE.A", `{"name":"A","subjects":["a..b"]}`, false},
	{"subjects overlapping each other", "$JS.API.STREAM.CREATE.O", `{"name":"O","subjects":["o.a","o.*"]}`, true},
	{"capture the system account", "$JS.API.STREAM.CREATE.SYS", `{"name":"SYS","subjects":["$SYS.>"]}`, true},
	{"capture system account events is allowed", "$JS.API.STREAM.CREATE.SA", `{"name":"SA","subjects":["$SYS.ACCOUNT.>"]}`, true},
	{"capture the api", "$JS.API.STREAM.CREATE.API", `{"name":"API","subjects":["$JS.*.STREAM.>"]}`, true},
	{"capture advisories is allowed", "$JS.API.STREAM.CREATE.ADV", `{"name":"ADV","subjects":["$JS.EVENT.ADVISORY.>"]}`, true},
	{"capture everything", "$JS.API.STREAM.CREATE.ALL", `{"name":"ALL","subjects":[">"]}`, true},
	{"description too long", "$JS.API.STREAM.CREATE.D", `{"name":"D","subjects":["d"],"description":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, true},
	{"unknown field", "$JS.API.STREAM.CREATE.U", `{"name":"U","subjects":["u"],"x_unknown_field":1}`, true},
	{"list with negative offset", "$JS.API.STREAM.LIST", `{"offset":-1}`, true},
	{"names with negative offset", "$JS.API.STREAM.NAMES", `{"offset":-5}`, true},
	{"info of missing stream", "$JS.API.STREAM.INFO.NOPE", "", true},
	{"update of missing stream", "$JS.API.STREAM.UPDATE.NOPE", `{"name":"NOPE"}`, true},
	{"delete of missing stream", "$JS.API.STREAM.DELETE.NOPE", "", true},
	{"purge of missing stream", "$JS.API.STREAM.PURGE.NOPE", "", true},
	{"get from empty stream", "$JS.API.STREAM.MSG.GET.X", `{"seq":1}`, true},
	{"last by subject missing", "$JS.API.STREAM.MSG.GET.X", `{"last_by_subj":"x.none"}`, true},
	{"names", "$JS.API.STREAM.NAMES", `{"offset":0}`, true},
	{"consumer info missing", "$JS.API.CONSUMER.INFO.X.NOPE", "", true},
	{"consumer on missing stream", "$JS.API.CONSUMER.CREATE.NOPE.C", `{"stream_name":"NOPE","config":{"name":"C"}}`, true},
	{"durable name mismatch", "$JS.API.CONSUMER.CREATE.X.C", `{"stream_name":"X","config":{"durable_name":"D"}}`, true},
	{"filter mismatch", "$JS.API.CONSUMER.CREATE.X.C.x.a", `{"stream_name":"X","config":{"name":"C","filter_subject":"x.b"}}`, true},
	{"last per subject needs filter", "$JS.API.CONSUMER.CREATE.X.C", `{"stream_name":"X","config":{"name":"C","deliver_policy":"last_per_subject"}}`, true},
	{"negative ack wait", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","ack_policy":"explicit","ack_wait":-1}}`, true},
	{"negative backoff", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","ack_policy":"explicit","backoff":[1000000000,-1],"max_deliver":5}}`, true},
	{"pull with idle heartbeat", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","ack_policy":"explicit","idle_heartbeat":1000000000}}`, true},
	{"pull with flow control", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","ack_policy":"explicit","flow_control":true}}`, true},
	{"push with max waiting", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","deliver_subject":"dn","max_waiting":3}}`, true},
	{"push with tiny heartbeat", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","deliver_subject":"dn","idle_heartbeat":1000}}`, true},
	{"push to wildcards", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","deliver_subject":"dn.*"}}`, true},
	{"unknown ack policy", "$JS.API.CONSUMER.CREATE.X.N", `{"stream_name":"X","config":{"durable_name":"N","ack_policy":"sometimes"}}`, false},
	{"negative max waiting reads as unset", "$JS.API.CONSUMER.CREATE.X.M", `{"stream_name":"X","config":{"durable_name":"M","ack_policy":"explicit","max_waiting":-4}}`, true},
	{"consumer delete negative", "$JS.API.CONSUMER.DELETE.X.M", "", true},
	{"consumer create without a name in the subject", "$JS.API.CONSUMER.CREATE.X", `{"stream_name":"X","config":{"name":"NN","ack_policy":"none","filter_subjects":["x.a","x.b"],"mem_storage":true}}`, true},
	{"ephemeral create without any name", "$JS.API.CONSUMER.CREATE.X", `{"stream_name":"X","config":{"ack_policy":"none","filter_subjects":["x.a","x.c"],"inactive_threshold":1000000000}}`, true},
	{"consumer create", "$JS.API.CONSUMER.CREATE.X.C", `{"stream_name":"X","config":{"durable_name":"C","ack_policy":"explicit"}}`, true},
	{"consumer create action create differs", "$JS.API.CONSUMER.CREATE.X.C", `{"stream_name":"X","config":{"durable_name":"C","ack_policy":"explicit","max_deliver":3},"action":"create"}`, true},
	{"consumer update missing", "$JS.API.CONSUMER.CREATE.X.U", `{"stream_name":"X","config":{"durable_name":"U","ack_policy":"explicit"},"action":"update"}`, true},
	{"consumer names", "$JS.API.CONSUMER.NAMES.X", `{"offset":0}`, true},
	{"consumer delete missing", "$JS.API.CONSUMER.DELETE.X.NOPE", "", true},
	{"workqueue stream", "$JS.API.STREAM.CREATE.WQ", `{"name":"WQ","subjects":["wq.>"],"retention":"workqueue"}`, true},
	{"workqueue needs explicit ack", "$JS.API.CONSUMER.CREATE.WQ.A", `{"stream_name":"WQ","config":{"durable_name":"A","ack_policy":"none"}}`, true},
	{"workqueue first consumer", "$JS.API.CONSUMER.CREATE.WQ.A", `{"stream_name":"WQ","config":{"durable_name":"A","ack_policy":"explicit"}}`, true},
	{"workqueue second unfiltered", "$JS.API.CONSUMER.CREATE.WQ.B", `{"stream_name":"WQ","config":{"durable_name":"B","ack_policy":"explicit"}}`, true},
	{"unknown api", "$JS.API.NOPE", "", true},
	{"pull from missing consumer", "$JS.API.CONSUMER.MSG.NEXT.X.NOPE", `{"batch":1,"no_wait":true}`, true},
	{"pull no wait on empty", "$JS.API.CONSUMER.MSG.NEXT.X.C", `{"batch":1,"no_wait":true}`, true},
	{"pull heartbeat too large", "$JS.API.CONSUMER.MSG.NEXT.X.C", `{"batch":1,"expires":1000000000,"idle_heartbeat":900000000}`, true},
	{"consumer delete", "$JS.API.CONSUMER.DELETE.X.C", "", true},
	{"purge with seq and keep", "$JS.API.STREAM.PURGE.X", `{"seq":2,"keep":1}`, true},
	{"overlapping filter subjects", "$JS.API.CONSUMER.CREATE.X.OV", `{"stream_name":"X","config":{"name":"OV","filter_subjects":["x.>","x.a"]}}`, true},
	{"duplicate filter subjects", "$JS.API.CONSUMER.CREATE.X.OV", `{"stream_name":"X","config":{"name":"OV","filter_subjects":["x.a","x.a"]}}`, true},
	{"filter subject and subjects", "$JS.API.CONSUMER.CREATE.X.OV", `{"stream_name":"X","config":{"name":"OV","filter_subject":"x.a","filter_subjects":["x.b"]}}`, true},
	{"filter outside the stream", "$JS.API.CONSUMER.CREATE.X.OV", `{"stream_name":"X","config":{"name":"OV","filter_subject":"y.a"}}`, true},
	{"durable for update", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","deliver_policy":"all"}}`, true},
	{"update changes deliver policy", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","deliver_policy":"new"}}`, true},
	{"update changes ack policy", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"all"}}`, true},
	{"update pull to push", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","deliver_subject":"upd.out"}}`, true},
	{"update max deliver is allowed", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","max_deliver":5}}`, true},
	{"update filter is allowed", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","max_deliver":5,"filter_subject":"x.b"}}`, true},
	{"update replay policy", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","max_deliver":5,"filter_subject":"x.b","replay_policy":"original"}}`, true},
	{"update opt start seq", "$JS.API.CONSUMER.CREATE.X.UPD", `{"stream_name":"X","config":{"durable_name":"UPD","ack_policy":"explicit","max_deliver":5,"filter_subject":"x.b","deliver_policy":"by_start_sequence","opt_start_seq":3}}`, true},
	{"workqueue with discard new per subject", "$JS.API.STREAM.CREATE.WQ2", `{"name":"WQ2","subjects":["wq2"],"retention":"workqueue","discard":"new","discard_new_per_subject":true,"max_msgs_per_subject":1}`, true},
	{"discard new per subject without limit", "$JS.API.STREAM.CREATE.DN", `{"name":"DN","subjects":["dn"],"discard":"new","discard_new_per_subject":true}`, true},
	{"discard new per subject with discard old", "$JS.API.STREAM.CREATE.DN", `{"name":"DN","subjects":["dn"],"discard_new_per_subject":true,"max_msgs_per_subject":2}`, true},
	{"negative max msgs per subject", "$JS.API.STREAM.CREATE.NM", `{"name":"NM","subjects":["nm"],"max_msgs_per_subject":-5}`, true},
	{"max msg size bigger than max payload", "$JS.API.STREAM.CREATE.MS", `{"name":"MS","subjects":["ms"],"max_msg_size":2000000}`, true},
	{"first seq", "$JS.API.STREAM.CREATE.FS", `{"name":"FS","subjects":["fs"],"first_seq":1000}`, true},
	{"publish after first seq", "fs", "x", true},
	{"mirror with first seq", "$JS.API.STREAM.CREATE.MFS", `{"name":"MFS","mirror":{"name":"FS"},"first_seq":5}`, true},
	{"compression s2", "$JS.API.STREAM.CREATE.CMP", `{"name":"CMP","subjects":["cmp"],"compression":"s2"}`, true},
	{"compression unknown", "$JS.API.STREAM.CREATE.CMP2", `{"name":"CMP2","subjects":["cmp2"],"compression":"zip"}`, false},
	{"pull with max batch", "$JS.API.CONSUMER.CREATE.X.MB", `{"stream_name":"X","config":{"durable_name":"MB","ack_policy":"explicit","max_batch":2,"max_expires":1000000000,"max_bytes":100}}`, true},
	{"pull beyond max batch", "$JS.API.CONSUMER.MSG.NEXT.X.MB", `{"batch":3,"expires":500000000}`, true},
	{"pull beyond max expires", "$JS.API.CONSUMER.MSG.NEXT.X.MB", `{"batch":1,"expires":2000000000}`, true},
	{"pull beyond max bytes", "$JS.API.CONSUMER.MSG.NEXT.X.MB", `{"batch":1,"expires":500000000,"max_bytes":200}`, true},
	{"pull with rate limit", "$JS.API.CONSUMER.CREATE.X.RL", `{"stream_name":"X","config":{"durable_name":"RL","ack_policy":"explicit","rate_limit_bps":1000}}`, true},
	{"push with rate limit", "$JS.API.CONSUMER.CREATE.X.PRL", `{"stream_name":"X","config":{"durable_name":"PRL","deliver_subject":"prl","ack_policy":"explicit","rate_limit_bps":8000}}`, true},
	{"tiny max expires", "$JS.API.CONSUMER.CREATE.X.ME", `{"stream_name":"X","config":{"durable_name":"ME","ack_policy":"explicit","max_expires":1000}}`, true},
	{"create sealed", "$JS.API.STREAM.CREATE.SL", `{"name":"SL","subjects":["sl"],"sealed":true}`, true},
	{"deny delete stream", "$JS.API.STREAM.CREATE.DD", `{"name":"DD","subjects":["dd"],"deny_delete":true,"deny_purge":true}`, true},
	{"cancel deny delete", "$JS.API.STREAM.UPDATE.DD", `{"name":"DD","subjects":["dd"],"deny_purge":true}`, true},
	{"cancel deny purge", "$JS.API.STREAM.UPDATE.DD", `{"name":"DD","subjects":["dd"],"deny_delete":true}`, true},
	{"discard new per subject needs discard new", "$JS.API.STREAM.UPDATE.DD", `{"name":"DD","subjects":["dd"],"deny_delete":true,"deny_purge":true,"discard_new_per_subject":true,"max_msgs_per_subject":2}`, true},
	{"publish before seal", "x.p", "before", true},
	{"seal", "$JS.API.STREAM.UPDATE.X", `{"name":"X","subjects":["x.>"],"sealed":true}`, true},
	{"publish to sealed", "x.p", "after", true},
	{"purge sealed", "$JS.API.STREAM.PURGE.X", "", true},
	{"delete from sealed", "$JS.API.STREAM.MSG.DELETE.X", `{"seq":1}`, true},
	{"unseal", "$JS.API.STREAM.UPDATE.X", `{"name":"X","subjects":["x.>"]}`, true},
	{"stream delete", "$JS.API.STREAM.DELETE.X", "", true},
}

// apiOutcome reduces an API answer to what clients branch on.
func apiOutcome(t *testing.T, nc *nats.Conn, sc apiScenario) string {
	t.Helper()
	resp, err := nc.Request(sc.subject, []byte(sc.body), 700*time.Millisecond)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return "no responders"
	case errors.Is(err, nats.ErrTimeout):
		return "no answer"
	case err != nil:
		t.Fatalf("%s: %v", sc.subject, err)
	}
	if status := resp.Header.Get("Status"); status != "" {
		return "status " + status + " " + resp.Header.Get("Description")
	}
	var r struct {
		Type  string `json:"type"`
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
		Total     *int  `json:"total"`
		DidCreate *bool `json:"did_create"`
		Success   *bool `json:"success"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return fmt.Sprintf("not json: %q", resp.Data)
	}
	out := "type=" + r.Type
	if r.Error != nil {
		out += fmt.Sprintf(" error=%d/%d", r.Error.Code, r.Error.ErrCode)
		if sc.words {
			out += " " + r.Error.Description
		}
	}
	if r.Total != nil && r.Error == nil {
		out += fmt.Sprintf(" total=%d", *r.Total)
	}
	if r.DidCreate != nil {
		out += fmt.Sprintf(" did_create=%v", *r.DidCreate)
	}
	if r.Success != nil {
		out += fmt.Sprintf(" success=%v", *r.Success)
	}
	return out
}

func TestJetStreamAPIMatchesReference(t *testing.T) {
	bus := startBus(t, server.Options{JetStream: true})
	ref := startReference(t, true)
	busNC := connect(t, busURL(bus))
	refNC := connect(t, "nats://"+refAddr(ref))
	for _, sc := range apiScenarios {
		want := apiOutcome(t, refNC, sc)
		got := apiOutcome(t, busNC, sc)
		if got != want {
			t.Errorf("%s (%s %s)\n  bus: %s\n  ref: %s", sc.name, sc.subject, sc.body, got, want)
		} else {
			t.Logf("%s: %s", sc.name, got)
		}
	}
}
