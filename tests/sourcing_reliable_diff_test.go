package tests

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// sourcingConsumerBody is the consumer create request a 2.14+ sourcing
// stream sends its origin (a direct, sourcing consumer with a stable
// name), as the reference builds it.
func sourcingConsumerBody(stream, name, deliver string) []byte {
	return fmt.Appendf(nil, `{"stream_name":%q,"config":{"name":%q,"deliver_policy":"all","ack_policy":"none",`+
		`"ack_wait":79200000000000,"max_deliver":1,"replay_policy":"instant","deliver_subject":%q,"flow_control":true,`+
		`"idle_heartbeat":1000000000,"inactive_threshold":10000000000,"direct":true,"sourcing":true,"num_replicas":1,"mem_storage":true}}`,
		stream, name, deliver)
}

// reliableSourcingScenario plays a sourcing stream against an origin
// (ADR-60, API levels 4 and 5): on a work-queue origin the sourcing
// consumer becomes a durable one acked by flow control, so what the
// sourcer says it stored leaves the work queue; asked again (a sourcer
// that restarted) it is the same consumer, reset to its ack floor; on a
// limits origin it keeps its direct form under a name made unique; the
// origin names its stream identity, refuses a create that expects
// another (10225), and a recreated origin has a new identity.
func reliableSourcingScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	nc := connect(t, url)
	var out []string
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "WQ", Subjects: []string{"wq.>"}, Retention: jetstream.WorkQueuePolicy},
		{Name: "LIM", Subjects: []string{"lim.>"}},
	} {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	for i := range 3 {
		if _, err := js.Publish(ctx, "wq."+strconv.Itoa(i), []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	identity := map[string]string{}
	create := func(what, stream, deliver, expectIdentity string) {
		m := nats.NewMsg("$JS.API.CONSUMER.CREATE." + stream)
		m.Header.Set("Nats-Required-Api-Level", "5")
		if expectIdentity != "" {
			m.Header.Set("Nats-Stream-Identity", expectIdentity)
		}
		m.Data = sourcingConsumerBody(stream, "JS_SRC_abc", deliver)
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil {
			out = append(out, what+": "+err.Error())
			return
		}
		var r struct {
			Name   string          `json:"name"`
			Config json.RawMessage `json:"config"`
			Error  *struct {
				ErrCode     int    `json:"err_code"`
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			t.Fatal(err)
		}
		ident := resp.Header.Get("Nats-Stream-Identity")
		if r.Error != nil {
			desc, named, _ := strings.Cut(r.Error.Description, ": ")
			desc += fmt.Sprintf(": <%d chars>, the known identity %v", len(named), named == identity[stream])
			out = append(out, fmt.Sprintf("%s: %d %s; identity header %v", what, r.Error.ErrCode, desc, ident != ""))
			return
		}
		var c struct {
			Durable           string `json:"durable_name"`
			Name              string `json:"name"`
			AckPolicy         string `json:"ack_policy"`
			AckWait           int64  `json:"ack_wait"`
			MaxDeliver        int    `json:"max_deliver"`
			InactiveThreshold int64  `json:"inactive_threshold"`
			Direct            bool   `json:"direct"`
			Sourcing          bool   `json:"sourcing"`
			DeliverPolicy     string `json:"deliver_policy"`
			FlowControl       bool   `json:"flow_control"`
			Heartbeat         int64  `json:"idle_heartbeat"`
		}
		if err := json.Unmarshal(r.Config, &c); err != nil {
			t.Fatal(err)
		}
		name := r.Name
		if base, suffix, ok := strings.Cut(name, "-"); ok {
			name = fmt.Sprintf("%s-<%d chars>", base, len(suffix))
		}
		c.Name = strings.Replace(c.Name, r.Name, name, 1)
		out = append(out, fmt.Sprintf("%s: name %s, %+v; identity %d chars, same as before %v",
			what, name, c, len(ident), identity[stream] == "" || identity[stream] == ident))
		identity[stream] = ident
	}
	sub, err := nc.SubscribeSync("src.wq")
	if err != nil {
		t.Fatal(err)
	}
	create("work queue", "WQ", "src.wq", "")
	// Read the three messages, then answer the flow-control request the
	// heartbeat brings with the first two stored.
	var got []string
	for answered := false; !answered; {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, fmt.Sprintf("deliveries: %v after %q", err, got))
			break
		}
		switch {
		case m.Header.Get("Status") == "100" && m.Reply != "":
			reply := nats.NewMsg(m.Reply)
			reply.Header.Set("Nats-Last-Consumer", "2")
			reply.Header.Set("Nats-Last-Stream", "2")
			if err := nc.PublishMsg(reply); err != nil {
				t.Fatal(err)
			}
			answered = true
		case m.Header.Get("Status") == "100":
		default:
			got = append(got, m.Subject)
		}
	}
	out = append(out, fmt.Sprintf("deliveries: %q", got))
	var msgs uint64
	waitFor(5*time.Second, func() bool {
		st, err := js.Stream(ctx, "WQ")
		if err != nil {
			t.Fatal(err)
		}
		msgs = st.CachedInfo().State.Msgs
		return msgs == 1 // the work queue dropped what the sourcer stored
	})
	out = append(out, fmt.Sprintf("work queue after the answer: %d msgs", msgs))
	// The sourcer comes back: the same consumer, from its ack floor.
	create("work queue again", "WQ", "src.wq", identity["WQ"])
	var again []string
	for len(again) == 0 {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			out = append(out, "redelivery: "+err.Error())
			break
		}
		if m.Header.Get("Status") == "" {
			meta, _ := m.Metadata()
			again = append(again, fmt.Sprintf("%s stream seq %d", m.Subject, meta.Sequence.Stream))
		}
	}
	out = append(out, fmt.Sprintf("after the second create: %q", again))
	create("limits", "LIM", "src.lim", "")
	create("wrong identity", "LIM", "src.lim2", "XXXXXXXX")
	if err := js.DeleteStream(ctx, "LIM"); err != nil {
		t.Fatal(err)
	}
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "LIM", Subjects: []string{"lim.>"}})
	out = append(out, "recreated: "+o)
	create("recreated, old identity", "LIM", "src.lim3", identity["LIM"])
	return out
}

func TestReliableSourcingMatchesReference(t *testing.T) {
	t.Parallel()
	ref := reliableSourcingScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := reliableSourcingScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
