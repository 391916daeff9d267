package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// sampleScenario: sample_freq accepted and refused as the reference does,
// and with 100% every explicit ack reported as a consumer ack metric.
func sampleScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	req := func(subject, body string) []byte { return mustRequest(t, nc, subject, body) }
	create := func(name, freq string) {
		var r struct {
			Config struct {
				SampleFreq string `json:"sample_freq"`
			} `json:"config"`
			Error *struct {
				ErrCode int `json:"err_code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(req("$JS.API.CONSUMER.CREATE.M."+name, fmt.Sprintf(`{"stream_name":"M","config":{"durable_name":%q,"ack_policy":"explicit","sample_freq":%q}}`, name, freq)), &r)
		if r.Error != nil {
			out = append(out, fmt.Sprintf("create %s %q: %d", name, freq, r.Error.ErrCode))
			return
		}
		out = append(out, fmt.Sprintf("create %s %q: sample_freq %q", name, freq, r.Config.SampleFreq))
	}
	req("$JS.API.STREAM.CREATE.M", `{"name":"M","subjects":["m"]}`)
	for i := 1; i <= 3; i++ {
		req("m", fmt.Sprint(i))
	}
	create("BAD", "often")
	create("NEG", "-5")
	create("HALF", "50")
	create("ALL", "100%")
	metrics, err := nc.SubscribeSync("$JS.EVENT.METRIC.CONSUMER.ACK.>")
	if err != nil {
		t.Fatal(err)
	}
	inbox := nats.NewInbox()
	msgs, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.M.ALL", inbox, []byte(`{"batch":3,"no_wait":true}`)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		m, err := msgs.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			_ = m.Term() // not sampled: only acks are
			continue
		}
		if err := m.AckSync(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		m, err := metrics.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, "metric: "+err.Error())
			continue
		}
		var e struct {
			Type        string `json:"type"`
			Stream      string `json:"stream"`
			Consumer    string `json:"consumer"`
			ConsumerSeq uint64 `json:"consumer_seq"`
			StreamSeq   uint64 `json:"stream_seq"`
			Delay       int64  `json:"ack_time"`
			Deliveries  uint64 `json:"deliveries"`
		}
		_ = json.Unmarshal(m.Data, &e)
		out = append(out, fmt.Sprintf("%s: %s %s/%s consumer seq %d stream seq %d deliveries %d, ack time > 0: %v",
			m.Subject, e.Type, e.Stream, e.Consumer, e.ConsumerSeq, e.StreamSeq, e.Deliveries, e.Delay > 0))
	}
	return out
}

func TestAckSamplingMatchesReference(t *testing.T) {
	t.Parallel()
	ref := sampleScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := sampleScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	for _, l := range ref {
		t.Log(l)
	}
	sameOutcomes(t, ref, got)
}
