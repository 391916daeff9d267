package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// errOutcome names an error the way a nats.go user sees it: its text, and
// the API code when there is one. nil is "ok".
func errOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	var apiErr *nats.APIError
	if errors.As(err, &apiErr) {
		return fmt.Sprintf("%d %s", apiErr.ErrorCode, apiErr.Description)
	}
	return err.Error()
}

// legacyErrorsScenario walks the old nats.go API through the errors its
// own tests expect (TestJetStreamSubscribeConsumerName,
// TestJetStreamBindConsumer, TestJetStreamPublish,
// TestJetStreamDirectGetMsg): each step's outcome as the client reports
// it. Issue 28, item 4.
func legacyErrorsScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	js, err := nc.JetStream(nats.MaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	step := func(name string, err error) { out = append(out, name+": "+errOutcome(err)) }

	_, err = js.AddStream(&nats.StreamConfig{Name: "TEST", Subjects: []string{"foo", "bar", "foo.*"}})
	step("add stream", err)
	_, err = js.Publish("foo", []byte("first"))
	step("publish", err)

	// A consumer name in the subject that is not the request's durable.
	_, err = nc.Request("$JS.API.CONSUMER.CREATE.TEST.other", []byte(`{"stream_name":"TEST","config":{"durable_name":"dur","ack_policy":"explicit"}}`), 5*time.Second)
	step("subject name vs durable", err)
	if m, err := nc.Request("$JS.API.CONSUMER.CREATE.TEST.other", []byte(`{"stream_name":"TEST","config":{"durable_name":"dur","ack_policy":"explicit"}}`), 5*time.Second); err == nil {
		out = append(out, "subject name vs durable reply: "+apiErrorOf(m.Data))
	}
	if m, err := nc.Request("$JS.API.CONSUMER.CREATE.TEST.other", []byte(`{"stream_name":"TEST","config":{"name":"nm","ack_policy":"explicit"}}`), 5*time.Second); err == nil {
		out = append(out, "subject name vs name reply: "+apiErrorOf(m.Data))
	}
	if m, err := nc.Request("$JS.API.CONSUMER.DURABLE.CREATE.TEST.other", []byte(`{"stream_name":"TEST","config":{"durable_name":"dur","ack_policy":"explicit"}}`), 5*time.Second); err == nil {
		out = append(out, "durable subject vs durable reply: "+apiErrorOf(m.Data))
	}
	if m, err := nc.Request("$JS.API.CONSUMER.DURABLE.CREATE.TEST.nodur", []byte(`{"stream_name":"TEST","config":{"ack_policy":"explicit"}}`), 5*time.Second); err == nil {
		out = append(out, "durable subject without durable reply: "+apiErrorOf(m.Data))
	}
	if m, err := nc.Request("$JS.API.CONSUMER.CREATE.TEST", []byte(`{"stream_name":"TEST","config":{"durable_name":"legacy","ack_policy":"explicit"}}`), 5*time.Second); err == nil {
		out = append(out, "legacy ephemeral subject with durable reply: "+apiErrorOf(m.Data))
	}
	sub, err := js.SubscribeSync("foo", nats.ConsumerName("my-ephemeral"))
	step("subscribe consumer name", err)
	if err == nil {
		ci, err := sub.ConsumerInfo()
		step("consumer info", err)
		if ci != nil {
			out = append(out, fmt.Sprintf("name %q durable %q", ci.Config.Name, ci.Config.Durable))
		}
		_ = sub.Unsubscribe()
	}
	sub, err = js.SubscribeSync("foo", nats.Durable("durable"), nats.ConsumerName("custom-name"))
	step("subscribe durable and name", err)
	if err == nil {
		ci, err := sub.ConsumerInfo()
		step("consumer info", err)
		if ci != nil {
			out = append(out, fmt.Sprintf("name %q durable %q", ci.Config.Name, ci.Config.Durable))
		}
		_, err = sub.NextMsg(2 * time.Second)
		step("next", err)
		_ = sub.Unsubscribe()
	}

	sub, err = js.SubscribeSync("foo", nats.ConsumerName(""))
	step("subscribe empty consumer name", err)
	if err == nil {
		ci, err := sub.ConsumerInfo()
		step("consumer info", err)
		if ci != nil {
			out = append(out, fmt.Sprintf("name length %d", len(ci.Config.Name)))
		}
		_ = sub.Unsubscribe()
	}

	// Binding.
	_, err = js.SubscribeSync("foo", nats.Bind("TEST", "push"))
	step("bind missing push", err)
	_, err = js.PullSubscribe("foo", "pull", nats.Bind("TEST", "pull"))
	step("bind missing pull", err)
	_, err = js.AddConsumer("TEST", &nats.ConsumerConfig{Durable: "push", AckPolicy: nats.AckExplicitPolicy, DeliverSubject: nats.NewInbox()})
	step("add push", err)
	sub, err = js.SubscribeSync("foo", nats.Bind("TEST", "push"))
	step("bind push", err)
	_, err = js.SubscribeSync("foo", nats.Durable("push"))
	step("durable already bound", err)
	_, err = js.QueueSubscribeSync("foo", "wq", nats.Durable("push"))
	step("queue on push without group", err)
	if sub != nil {
		_ = sub.Unsubscribe()
	}
	_, err = js.QueueSubscribeSync("foo", "wq1", nats.Durable("qpush"))
	step("queue durable", err)
	_, err = js.SubscribeSync("foo", nats.Durable("qpush"))
	step("plain on queue durable", err)
	_, err = js.QueueSubscribeSync("foo", "wq2", nats.Durable("qpush"))
	step("other group on queue durable", err)
	_, err = js.AddConsumer("TEST", &nats.ConsumerConfig{Durable: "pull", AckPolicy: nats.AckExplicitPolicy})
	step("add pull", err)
	_, err = js.PullSubscribe("foo", "push", nats.Bind("TEST", "push"))
	step("pull bind to push", err)
	_, err = js.SubscribeSync("foo", nats.Bind("TEST", "pull"))
	step("push bind to pull", err)

	// A second member binds to a queue consumer by name and gets some.
	sub2, err := js.QueueSubscribeSync("foo", "wq3")
	step("queue wq3", err)
	if err == nil {
		ci, err := sub2.ConsumerInfo()
		step("consumer info", err)
		sub3, err := js.QueueSubscribeSync("foo", "wq3", nats.Bind("TEST", ci.Name))
		step("bind second member", err)
		for range 100 {
			if _, err := js.Publish("foo", []byte("new")); err != nil {
				t.Fatal(err)
			}
		}
		if err == nil {
			_, err = sub3.NextMsg(2 * time.Second)
			step("second member gets one", err)
		}
	}

	// Expectations on publish.
	_, err = js.Publish("foo", []byte("x"), nats.ExpectStream("ORDERS"))
	step("expect stream", err)
	_, err = js.Publish("foo", []byte("x"), nats.ExpectLastSequence(10))
	step("expect last seq", err)
	_, err = js.Publish("foo", []byte("x"), nats.ExpectLastSequencePerSubject(10))
	step("expect last subject seq", err)
	hm := nats.NewMsg("foo")
	hm.Header[nats.ExpectedLastSeqHdr] = []string{"10"}
	_, err = js.PublishMsg(hm)
	step("expect last seq header", err)
	// Header names are case-sensitive: this one is no expectation.
	lm := nats.NewMsg("foo")
	lm.Header["nats-expected-last-sequence"] = []string{"99"}
	pa, err := js.PublishMsg(lm)
	step("lower-case expectation header", err)
	if pa != nil {
		out = append(out, fmt.Sprintf("seq %d", pa.Sequence))
	}
	for range 2 {
		pa, err = js.Publish("foo", []byte("x"), nats.MsgId("ZZZ"))
		step("msg id", err)
		if pa != nil {
			out = append(out, fmt.Sprintf("seq %d duplicate %v", pa.Sequence, pa.Duplicate))
		}
	}
	_, err = js.Publish("foo", []byte("x"), nats.ExpectLastSequence(22))
	step("expect last seq after msg id", err)
	_, err = js.Publish("foo", []byte("x"), nats.ExpectLastSequence(pa.Sequence))
	step("expect right last seq", err)
	if si, err := js.StreamInfo("TEST"); err == nil {
		out = append(out, fmt.Sprintf("msgs %d", si.State.Msgs))
	}
	_, err = js.Publish("foo", []byte("x"), nats.ExpectLastMsgId("AAA"))
	step("expect last msg id", err)

	// Direct get on a stream without allow_direct.
	_, err = js.GetMsg("TEST", 1, nats.DirectGet())
	step("direct get without allow_direct", err)
	_, err = js.GetLastMsg("TEST", "foo", nats.DirectGet())
	step("direct get last without allow_direct", err)
	return out
}

// apiErrorOf is the error code and text of an API reply, or "ok".
func apiErrorOf(body []byte) string {
	var r struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "bad reply: " + err.Error()
	}
	if r.Error == nil {
		return "ok"
	}
	return fmt.Sprintf("%d %d %s", r.Error.Code, r.Error.ErrCode, r.Error.Description)
}

// newErrorsScenario: the errors the new jetstream API's users meet on a
// consumer filter and on last-message lookups (TestGetLastMsgForSubject).
func newErrorsScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	var out []string
	step := func(name string, err error) { out = append(out, name+": "+errOutcome(err)) }
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "F", Subjects: []string{"FOO.*"}})
	step("create F", err)
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"BAR.*"}, AllowDirect: true})
	step("create B", err)
	for i := 1; i < 5; i++ {
		for _, s := range []string{"FOO", "BAR"} {
			for _, k := range []string{"A", "B"} {
				_, err := js.Publish(ctx, s+"."+k, fmt.Appendf(nil, "msg %d on subject %s", i, k))
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	_, err = js.CreateConsumer(ctx, "F", jetstream.ConsumerConfig{FilterSubjects: []string{"FOO.A", ""}})
	step("empty filter in filter_subjects", err)
	_, err = js.CreateConsumer(ctx, "F", jetstream.ConsumerConfig{FilterSubjects: []string{""}})
	step("only empty filter in filter_subjects", err)
	for _, name := range []string{"F", "B"} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"*.A", ">", "*.Z", "FOO.A", "BAR.B"} {
			m, err := s.GetLastMsgForSubject(ctx, subj)
			if err != nil {
				step(name+" last "+subj, err)
				continue
			}
			out = append(out, fmt.Sprintf("%s last %s: %s %d %q", name, subj, m.Subject, m.Sequence, m.Data))
		}
		short, cancel := context.WithTimeout(ctx, time.Microsecond)
		_, err = s.GetLastMsgForSubject(short, "*.A")
		cancel()
		out = append(out, fmt.Sprintf("%s last with expired context: deadline %v", name, errors.Is(err, context.DeadlineExceeded)))
	}
	return out
}

func TestJetStreamLegacyErrorsMatchReference(t *testing.T) {
	t.Parallel()
	ref := legacyErrorsScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := legacyErrorsScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

func TestJetStreamFilterAndLastMsgErrorsMatchReference(t *testing.T) {
	t.Parallel()
	ref := newErrorsScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := newErrorsScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// maxAckPendingScenario: with a server max_ack_pending of 123, nats.go's
// sync subscribe (which asks for its queue's 64k) and a pull subscribe
// without a limit are refused naming the limit, and both work below it
// (TestJetStreamSyncSubscribeWithMaxAckPending).
func maxAckPendingScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	js, err := nc.JetStream(nats.MaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	step := func(name string, err error) { out = append(out, name+": "+errOutcome(err)) }
	_, err = js.AddStream(&nats.StreamConfig{Name: "MAX_ACK_PENDING", Subjects: []string{"foo"}})
	step("add stream", err)
	_, err = js.SubscribeSync("foo")
	step("sync subscribe", err)
	_, err = js.PullSubscribe("foo", "bar")
	step("pull subscribe", err)
	sub, err := js.SubscribeSync("foo", nats.MaxAckPending(64))
	step("sync subscribe 64", err)
	if err == nil {
		_ = sub.Unsubscribe()
	}
	sub, err = js.PullSubscribe("foo", "bar", nats.MaxAckPending(64))
	step("pull subscribe 64", err)
	if err == nil {
		_ = sub.Unsubscribe()
	}
	return out
}

func TestJetStreamSyncSubscribeMaxAckPendingMatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReferenceConfig(t, `listen: "127.0.0.1:-1"
jetstream { store_dir: %q, limits { max_ack_pending: 123 } }
`)
	bus := startBus(t, server.Options{JetStream: true, JetStreamLimits: server.JetStreamLimits{MaxAckPending: 123}})
	sameOutcomes(t, maxAckPendingScenario(t, ref.ClientURL()), maxAckPendingScenario(t, busURL(bus)))
}

// directGetScenario walks nats.go's TestJetStreamDirectGetMsg: no
// responders until allow_direct is on, then gets by seq, next by subject
// and last by subject, a header kept, a seq past the end and seq 0.
func directGetScenario(t *testing.T, url string) []string {
	nc := connect(t, url)
	js, err := nc.JetStream(nats.MaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	si, err := js.AddStream(&nats.StreamConfig{Name: "DGM", Storage: nats.MemoryStorage, Subjects: []string{"foo", "bar"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"foo", "a"}, {"foo", "b"}, {"foo", "c"}, {"bar", "d"}, {"foo", "e"}} {
		if _, err := js.Publish(p[0], []byte(p[1])); err != nil {
			t.Fatal(err)
		}
	}
	get := func(what string, seq uint64, last bool, opt nats.JSOpt, subject string) {
		var m *nats.RawStreamMsg
		var err error
		if last {
			m, err = js.GetLastMsg("DGM", subject, opt)
		} else {
			m, err = js.GetMsg("DGM", seq, opt)
		}
		if err != nil {
			out = append(out, what+": "+errOutcome(err))
			return
		}
		out = append(out, fmt.Sprintf("%s: %s %d %q time %v header %q", what, m.Subject, m.Sequence, m.Data, !m.Time.IsZero(), m.Header.Get("MyHeader")))
	}
	get("before allow_direct", 1, false, nats.DirectGet(), "")
	si.Config.AllowDirect = true
	if _, err := js.UpdateStream(&si.Config); err != nil {
		t.Fatal(err)
	}
	get("next bar", 0, false, nats.DirectGetNext("bar"), "")
	get("last foo", 0, true, nats.DirectGet(), "foo")
	get("next foo", 0, false, nats.DirectGetNext("foo"), "")
	get("next foo from 4", 4, false, nats.DirectGetNext("foo"), "")
	get("next foo from 2", 2, false, nats.DirectGetNext("foo"), "")
	msg := nats.NewMsg("foo")
	msg.Header.Set("MyHeader", "MyValue")
	if _, err := js.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	get("with header", 6, false, nats.DirectGet(), "")
	get("past the end", 100, false, nats.DirectGet(), "")
	get("seq 0", 0, false, nats.DirectGet(), "")
	get("last bar", 0, true, nats.DirectGet(), "bar")
	return out
}

func TestJetStreamDirectGetMatchesReference(t *testing.T) {
	t.Parallel()
	ref := directGetScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := directGetScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
