package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// ackFlowControlScenario: ack policy flow_control (API level 4) as the
// reference takes and serves it. The config rules and defaults, then a
// push consumer on a work queue played by a raw subscriber answering flow
// control as a sourcing stream does (Nats-Last-Consumer and
// Nats-Last-Stream): max ack pending reached asks, the answer acks (and
// the work queue drops) what it names, an idle heartbeat asks again
// while something is pending, and there is no ack subject.
func ackFlowControlScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	nc := connect(t, url)
	var out []string
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "WQ", Subjects: []string{"wq.>"}, Retention: jetstream.WorkQueuePolicy})
	out = append(out, o)
	create := func(what, name, body string) {
		resp, err := nc.Request("$JS.API.CONSUMER.CREATE.WQ."+name, []byte(`{"stream_name":"WQ","config":`+body+`}`), 5*time.Second)
		if err != nil {
			out = append(out, what+": "+err.Error())
			return
		}
		var r struct {
			Config *struct {
				AckPolicy     string `json:"ack_policy"`
				AckWait       int64  `json:"ack_wait"`
				MaxAckPending int    `json:"max_ack_pending"`
				MaxDeliver    int    `json:"max_deliver"`
				FlowControl   bool   `json:"flow_control"`
				Heartbeat     int64  `json:"idle_heartbeat"`
			} `json:"config"`
			Error *struct {
				ErrCode     int    `json:"err_code"`
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Error != nil:
			out = append(out, fmt.Sprintf("%s: %d %s", what, r.Error.ErrCode, r.Error.Description))
		case r.Config != nil:
			out = append(out, fmt.Sprintf("%s: ok %+v", what, *r.Config))
			if name != "F" { // a work queue takes one consumer: make room
				if _, err := nc.Request("$JS.API.CONSUMER.DELETE.WQ."+name, nil, 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	create("pull", "A1", `{"durable_name":"A1","ack_policy":"flow_control"}`)
	create("no fc", "A2", `{"durable_name":"A2","deliver_subject":"d.a","ack_policy":"flow_control","flow_control":false,"idle_heartbeat":50000000}`)
	create("no max ack pending", "A3", `{"durable_name":"A3","deliver_subject":"d.a","ack_policy":"flow_control","max_ack_pending":-1}`)
	create("ack wait", "A4", `{"durable_name":"A4","deliver_subject":"d.a","ack_policy":"flow_control","ack_wait":5000000000}`)
	create("backoff", "A5", `{"durable_name":"A5","deliver_subject":"d.a","ack_policy":"flow_control","backoff":[1000000000,2000000000],"max_deliver":5}`)
	create("max deliver", "A6", `{"durable_name":"A6","deliver_subject":"d.a","ack_policy":"flow_control","max_deliver":3}`)
	create("all on a work queue", "A7", `{"durable_name":"A7","deliver_subject":"d.a","ack_policy":"all"}`)

	// The sourcer: it reads deliveries and flow-control requests in order.
	sub, err := nc.SubscribeSync("d.f")
	if err != nil {
		t.Fatal(err)
	}
	create("ok", "F", `{"durable_name":"F","deliver_subject":"d.f","ack_policy":"flow_control","max_ack_pending":2}`)
	for i := range 3 {
		if _, err := js.Publish(ctx, "wq."+strconv.Itoa(i), []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	var lastSeq, lastDelivered uint64 // of the deliveries read
	var ackSubject string
	// next reads until a flow-control request and answers it with where
	// the sourcer stands, as if it stored the deliveries up to upTo.
	next := func(what string, upTo uint64) {
		var got []string
		for {
			m, err := sub.NextMsg(5 * time.Second)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %v after %q", what, err, got))
				return
			}
			switch status := m.Header.Get("Status"); {
			case status == "100" && m.Reply != "":
				reply := nats.NewMsg(m.Reply)
				reply.Header.Set("Nats-Last-Consumer", strconv.FormatUint(min(upTo, lastDelivered), 10))
				reply.Header.Set("Nats-Last-Stream", strconv.FormatUint(min(upTo, lastSeq), 10))
				if err := nc.PublishMsg(reply); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("%s: %q then flow control %s", what, got, m.Header.Get("Description")))
				return
			case status == "100":
				got = append(got, "heartbeat")
			default:
				meta, err := m.Metadata()
				if err != nil {
					t.Fatal(err)
				}
				lastSeq, lastDelivered, ackSubject = meta.Sequence.Stream, meta.Sequence.Consumer, m.Reply
				got = append(got, fmt.Sprintf("%s %d/%d", m.Subject, meta.Sequence.Stream, meta.Sequence.Consumer))
			}
		}
	}
	state := func(what string, want uint64) {
		// The answer is a plain publish: wait for its effect (the ack
		// floor want, the work queue without what is acked), then
		// report whatever it is.
		var line string
		waitFor(5*time.Second, func() bool {
			st, err := js.Stream(ctx, "WQ")
			if err != nil {
				t.Fatal(err)
			}
			resp, err := nc.Request("$JS.API.CONSUMER.INFO.WQ.F", nil, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var ci jetstream.ConsumerInfo
			if err := json.Unmarshal(resp.Data, &ci); err != nil {
				t.Fatal(err)
			}
			line = fmt.Sprintf("%s: stream msgs %d; floor %d/%d, ack pending %d, redelivered %d",
				what, st.CachedInfo().State.Msgs, ci.AckFloor.Stream, ci.AckFloor.Consumer, ci.NumAckPending, ci.NumRedelivered)
			return ci.AckFloor.Stream == want && st.CachedInfo().State.Msgs == 3-want // the work queue dropped what was acked
		})
		out = append(out, line)
	}
	next("max ack pending", 1)
	state("after acking 1", 1)
	next("after the answer", 2)
	state("after acking 2", 2)
	next("idle, one pending", 3)
	state("after acking 3", 3)
	// An ack on the ack subject reaches no one.
	_, err = nc.Request(ackSubject, nil, 2*time.Second)
	out = append(out, fmt.Sprintf("ack subject: no responders %v", errors.Is(err, nats.ErrNoResponders)))
	return out
}

func TestAckFlowControlMatchesReference(t *testing.T) {
	t.Parallel()
	ref := ackFlowControlScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := ackFlowControlScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
