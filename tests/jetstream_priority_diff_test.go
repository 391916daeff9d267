package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// Priority groups (issue 13) through nats.go's jetstream package, against
// bus and the reference: the config and pull errors, overflow, a pinned
// client with failover after priority_timeout and unpin through the
// API, the advisories, and prioritized pulls.

// pinTTL is the pinned consumer's priority_timeout: short, since the
// scenario waits for it once.
const pinTTL = 2 * time.Second

// apiAnswer is the error of a raw API request, or "ok".
func apiAnswer(t *testing.T, nc *nats.Conn, subject, body string) string {
	t.Helper()
	resp, err := nc.Request(subject, []byte(body), 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	var r struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		t.Fatalf("%s: %s: %v", subject, resp.Data, err)
	}
	if r.Error == nil {
		return "ok"
	}
	return fmt.Sprintf("%d %d %s", r.Error.Code, r.Error.ErrCode, r.Error.Description)
}

// pullStatus sends a raw pull and returns the status it is answered
// with, or the subject of the message it gets.
func pullStatus(t *testing.T, nc *nats.Conn, consumer, body string) string {
	t.Helper()
	m, err := nc.Request("$JS.API.CONSUMER.MSG.NEXT.Q."+consumer, []byte(body), 5*time.Second)
	if err != nil {
		return err.Error()
	}
	if s := m.Header.Get("Status"); s != "" {
		return s + " " + m.Header.Get("Description")
	}
	return "message " + m.Subject
}

// pins names pin ids in order of appearance (#1, #2, ...), since the ids
// themselves are random.
type pins map[string]string

func (p pins) name(id string) string {
	if id == "" {
		return "none"
	}
	if _, ok := p[id]; !ok {
		p[id] = fmt.Sprintf("#%d", len(p)+1)
	}
	return p[id]
}

func priorityScenario(t *testing.T, url string) []string {
	t.Helper()
	nc := connect(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "Q", Subjects: []string{"q.>"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// Config checks.
	for _, cfg := range []string{
		`"priority_policy":"overflow"`,
		`"priority_groups":["A"]`,
		`"priority_timeout":1000000000`,
		`"deliver_subject":"d","priority_policy":"pinned_client","priority_groups":["A"]`,
		`"priority_policy":"pinned_client","priority_groups":[""]`,
		`"priority_policy":"pinned_client","priority_groups":["a.b"]`,
		`"priority_policy":"pinned_client","priority_groups":["seventeen-chars-x"]`,
		`"priority_policy":"sometimes","priority_groups":["A"]`,
		`"priority_policy":"none"`,
	} {
		body := `{"stream_name":"Q","config":{"durable_name":"BAD","ack_policy":"explicit",` + cfg + `}}`
		add("create %s: %s", cfg, apiAnswer(t, nc, "$JS.API.CONSUMER.CREATE.Q.BAD", body))
		_ = st.DeleteConsumer(ctx, "BAD")
	}
	pinned, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "DEF", AckPolicy: jetstream.AckExplicitPolicy,
		PriorityPolicy: jetstream.PriorityPolicyPinned, PriorityGroups: []string{"A"}})
	if err != nil {
		t.Fatal(err)
	}
	add("default priority_timeout: %v", pinned.CachedInfo().Config.PinnedTTL)

	// Pull checks.
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "PLAIN", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ consumer, body string }{
		{"DEF", `{"batch":1,"expires":100000000}`},
		{"DEF", `{"batch":1,"group":"Z","expires":100000000}`},
		{"DEF", `{"batch":1,"group":"A","min_pending":2,"expires":100000000}`},
		{"DEF", `{"batch":1,"group":"A","priority":10,"expires":100000000}`},
		{"DEF", `{"batch":1,"group":"A","expires":100000000}`},
		{"PLAIN", `{"batch":1,"group":"A","id":"x","expires":100000000}`},
		{"PLAIN", `{"batch":1,"group":"A","expires":100000000}`},
	} {
		add("pull %s %s: %s", c.consumer, c.body, pullStatus(t, nc, c.consumer, c.body))
	}

	publish := func(subject string, n int) {
		for i := range n {
			if _, err := js.Publish(ctx, subject, []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := pins{}
	fetch := func(label string, c jetstream.Consumer, n int, wait time.Duration, opts ...jetstream.FetchOpt) {
		b, err := c.Fetch(n, append(opts, jetstream.FetchMaxWait(wait))...)
		if err != nil {
			add("%s: %v", label, err)
			return
		}
		got, pin := 0, map[string]bool{}
		for m := range b.Messages() {
			_ = m.Ack()
			got++
			pin[ids.name(m.Headers().Get("Nats-Pin-Id"))] = true
		}
		add("%s: %d messages, pins %v, err %v", label, got, pin, b.Error())
	}

	// Overflow: served only from min_pending left, or min_ack_pending
	// unacknowledged.
	ov, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "OV", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "q.ov.>",
		PriorityPolicy: jetstream.PriorityPolicyOverflow, PriorityGroups: []string{"A"}})
	if err != nil {
		t.Fatal(err)
	}
	publish("q.ov.1", 3)
	group := jetstream.FetchPriorityGroup("A")
	fetch("overflow min_pending 5, 3 pending", ov, 10, 300*time.Millisecond, group, jetstream.FetchMinPending(5))
	publish("q.ov.2", 4)
	b, err := ov.Fetch(10, group, jetstream.FetchMinPending(5), jetstream.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range b.Messages() { // not acked: three unacknowledged
		n++
	}
	add("overflow min_pending 5, 7 pending: %d messages", n)
	fetch("overflow min_ack_pending 4, 3 unacknowledged", ov, 10, 300*time.Millisecond, group, jetstream.FetchMinAckPending(4))
	fetch("overflow min_ack_pending 3, 3 unacknowledged", ov, 10, 500*time.Millisecond, group, jetstream.FetchMinAckPending(3))
	fetch("overflow without a group", ov, 1, 300*time.Millisecond)

	// Pinned client: the first client is pinned, a second waits, a wrong
	// pin is refused; the pin moves after priority_timeout and on unpin.
	adv, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.CONSUMER.*.Q.PIN")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "PIN", AckPolicy: jetstream.AckExplicitPolicy, FilterSubject: "q.pin.>",
		PriorityPolicy: jetstream.PriorityPolicyPinned, PriorityGroups: []string{"A"}, PinnedTTL: pinTTL}); err != nil {
		t.Fatal(err)
	}
	c1, _ := js.Consumer(ctx, "Q", "PIN")
	c2, _ := js.Consumer(ctx, "Q", "PIN")
	info := func(label string) {
		i, err := c1.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range i.PriorityGroups {
			add("%s: group %s pinned %s, pinned_ts set %v", label, g.Group, ids.name(g.PinnedClientID), !g.PinnedTS.IsZero())
		}
	}
	info("info before a pin")
	publish("q.pin.1", 4)
	fetch("first client", c1, 4, 2*time.Second, group)
	info("info pinned")
	publish("q.pin.2", 2)
	fetch("second client while pinned", c2, 2, 300*time.Millisecond, group)
	add("pull with a wrong pin: %s", pullStatus(t, nc, "PIN", `{"batch":1,"group":"A","id":"bogus","expires":1000000000}`))
	fetch("first client again", c1, 2, 2*time.Second, group)
	publish("q.pin.3", 2)
	start := time.Now()
	fetch("second client, the pin timed out", c2, 2, 3*pinTTL, group)
	add("failover waited for priority_timeout: %v", time.Since(start) > pinTTL/2)
	fetch("first client with its old pin", c1, 1, time.Second, group)
	add("unpin: %v", st.UnpinConsumer(ctx, "PIN", "A"))
	add("unpin an unknown group: %v", st.UnpinConsumer(ctx, "PIN", "Z"))
	add("unpin a bad group name: %v", st.UnpinConsumer(ctx, "PIN", "a.b"))
	add("unpin a missing consumer: %v", st.UnpinConsumer(ctx, "NOPE", "A"))
	info("info unpinned")
	publish("q.pin.4", 1)
	fetch("second client with its old pin", c2, 1, time.Second, group)
	fetch("first client after the unpin", c1, 1, time.Second, group)
	var advisories []string
	for len(advisories) < 5 {
		m, err := adv.NextMsg(5 * time.Second)
		if err != nil {
			break
		}
		var a struct {
			Type, Group, Reason, Stream, Consumer string
			PinnedID                              string `json:"pinned_id"`
		}
		_ = json.Unmarshal(m.Data, &a)
		kind := strings.TrimPrefix(a.Type, "io.nats.jetstream.advisory.v1.")
		if !strings.HasPrefix(kind, "consumer_group_") {
			continue // bus sends no consumer action advisories (yet)
		}
		advisories = append(advisories, fmt.Sprintf("%s %s %s/%s %s %s", m.Subject, kind, a.Stream, a.Consumer, a.Group, a.Reason+" pin "+ids.name(a.PinnedID)))
	}
	add("advisories:\n  %s", strings.Join(advisories, "\n  "))

	// Prioritized: the pull of the lowest priority number goes first.
	if _, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "PRI", AckPolicy: jetstream.AckNonePolicy, FilterSubject: "q.pri.>",
		PriorityPolicy: jetstream.PriorityPolicyPrioritized, PriorityGroups: []string{"A"}}); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	for _, p := range []int{5, 1} {
		inbox := nats.NewInbox()
		if _, err := nc.Subscribe(inbox, func(m *nats.Msg) { got <- fmt.Sprintf("priority %d got %s", p, m.Subject) }); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf(`{"batch":1,"group":"A","priority":%d,"expires":5000000000}`, p)
		if err := nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT.Q.PRI", inbox, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	pri, _ := js.Consumer(ctx, "Q", "PRI")
	waitFor(5*time.Second, func() bool {
		i, err := pri.Info(ctx)
		return err == nil && i.NumWaiting == 2
	})
	for i := range 2 {
		publish(fmt.Sprintf("q.pri.%d", i), 1)
		select {
		case s := <-got:
			add("prioritized: %s", s)
		case <-time.After(3 * time.Second):
			add("prioritized: nothing delivered")
		}
	}
	return out
}

func TestPriorityGroupsMatchReference(t *testing.T) {
	t.Parallel()
	ref := priorityScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := priorityScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	if strings.Join(ref, "\n") != strings.Join(got, "\n") {
		for i := range max(len(ref), len(got)) {
			var r, g string
			if i < len(ref) {
				r = ref[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if r != g {
				t.Errorf("line %d differs\n bus: %s\n ref: %s", i, g, r)
			}
		}
		t.Logf("reference:\n%s", strings.Join(ref, "\n"))
	}
}
