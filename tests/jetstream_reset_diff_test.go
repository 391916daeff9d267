package tests

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// resetScenario: $JS.API.CONSUMER.RESET on a running consumer, to a seq
// and back to the ack floor, per deliver policy, and what it delivers
// after, through raw requests.
func resetScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	var out []string
	raw := func(subject, body string) []byte { return mustRequest(t, nc, subject, body) }
	reset := func(consumer, body string) {
		var r struct {
			Error *struct {
				ErrCode     int    `json:"err_code"`
				Description string `json:"description"`
			} `json:"error"`
			Type      string `json:"type"`
			ResetSeq  uint64 `json:"reset_seq"`
			Delivered struct {
				Consumer uint64 `json:"consumer_seq"`
				Stream   uint64 `json:"stream_seq"`
			} `json:"delivered"`
			AckFloor struct {
				Consumer uint64 `json:"consumer_seq"`
				Stream   uint64 `json:"stream_seq"`
			} `json:"ack_floor"`
			NumAckPending int    `json:"num_ack_pending"`
			NumPending    uint64 `json:"num_pending"`
		}
		if err := json.Unmarshal(raw("$JS.API.CONSUMER.RESET.R."+consumer, body), &r); err != nil {
			t.Fatal(err)
		}
		if r.Error != nil {
			out = append(out, fmt.Sprintf("reset %s %s: %d %s", consumer, body, r.Error.ErrCode, r.Error.Description))
			return
		}
		out = append(out, fmt.Sprintf("reset %s %s: %s seq %d, delivered %+v, ack floor %+v, ack pending %d, pending %d",
			consumer, body, r.Type, r.ResetSeq, r.Delivered, r.AckFloor, r.NumAckPending, r.NumPending))
	}
	fetch := func(consumer string, n int, ack bool) {
		inbox := nats.NewInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe() //nolint:errcheck
		if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.R."+consumer, inbox, []byte(fmt.Sprintf(`{"batch":%d,"no_wait":true}`, n))); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			m, err := sub.NextMsg(2 * time.Second)
			if err != nil || m.Header.Get("Status") != "" {
				break
			}
			md, _ := m.Metadata()
			got = append(got, fmt.Sprintf("%s(s%d c%d d%d)", m.Data, md.Sequence.Stream, md.Sequence.Consumer, md.NumDelivered))
			if ack {
				_ = m.AckSync()
			}
			if len(got) == n {
				break
			}
		}
		out = append(out, fmt.Sprintf("fetch %s %d: %v", consumer, n, got))
	}
	raw("$JS.API.STREAM.CREATE.R", `{"name":"R","subjects":["r"]}`)
	for i := 1; i <= 6; i++ {
		raw("r", fmt.Sprint("m", i))
	}
	raw("$JS.API.CONSUMER.CREATE.R.A", `{"stream_name":"R","config":{"durable_name":"A","ack_policy":"explicit"}}`)
	raw("$JS.API.CONSUMER.CREATE.R.S", `{"stream_name":"R","config":{"durable_name":"S","ack_policy":"explicit","deliver_policy":"by_start_sequence","opt_start_seq":3}}`)
	raw("$JS.API.CONSUMER.CREATE.R.N", `{"stream_name":"R","config":{"durable_name":"N","ack_policy":"explicit","deliver_policy":"new"}}`)

	fetch("A", 2, true)  // m1, m2 acked
	fetch("A", 2, false) // m3, m4 pending
	reset("A", `{"seq":2}`)
	fetch("A", 3, false)
	reset("A", "") // back to after the ack floor
	fetch("A", 1, true)
	reset("S", `{"seq":2}`)
	reset("S", `{"seq":5}`)
	fetch("S", 5, false)
	var info struct {
		Delivered struct {
			Stream uint64 `json:"stream_seq"`
		} `json:"delivered"`
		AckFloor struct {
			Stream uint64 `json:"stream_seq"`
		} `json:"ack_floor"`
	}
	_ = json.Unmarshal(raw("$JS.API.CONSUMER.INFO.R.N", ""), &info)
	out = append(out, fmt.Sprintf("info N: %+v", info))
	reset("N", `{"seq":1}`)
	reset("N", "")
	reset("A", `{"seq":100}`)
	fetch("A", 1, false)
	return out
}

func TestConsumerResetMatchesReference(t *testing.T) {
	t.Parallel()
	ref := resetScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := resetScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	for _, l := range ref {
		t.Log(l)
	}
	sameOutcomes(t, ref, got)
}

// A reset and a deliver-new start are journaled: after a restart the
// reset consumer goes on from where the reset put it, and a deliver-new
// consumer that had delivered nothing yet still gets what was stored
// after its creation (it used to start after the stream's end again).
func TestConsumerStartAndResetSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := ctxT(t)
	first := startJSAt(t, dir)
	nc := connect(t, busURL(first))
	mustRequest(t, nc, "$JS.API.STREAM.CREATE.R", `{"name":"R","subjects":["r"]}`)
	for i := 1; i <= 4; i++ {
		mustRequest(t, nc, "r", fmt.Sprint("m", i))
	}
	mustRequest(t, nc, "$JS.API.CONSUMER.CREATE.R.N", `{"stream_name":"R","config":{"durable_name":"N","ack_policy":"explicit","deliver_policy":"new"}}`)
	mustRequest(t, nc, "$JS.API.CONSUMER.CREATE.R.A", `{"stream_name":"R","config":{"durable_name":"A","ack_policy":"explicit"}}`)
	mustRequest(t, nc, "$JS.API.CONSUMER.RESET.R.A", `{"seq":3}`)
	for i := 5; i <= 6; i++ {
		mustRequest(t, nc, "r", fmt.Sprint("m", i))
	}
	nc.Close()
	shutdown(t, first)

	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js := jsClient(t, second)
	for consumer, want := range map[string]string{"N": "m5 m6", "A": "m3 m4 m5 m6"} {
		c, err := js.Consumer(ctx, "R", consumer)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.FetchNoWait(10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for m := range b.Messages() {
			got = append(got, string(m.Data()))
		}
		if fmt.Sprint(got) != "["+want+"]" {
			t.Errorf("consumer %s after the restart got %v, want [%s]", consumer, got, want)
		}
	}
}
