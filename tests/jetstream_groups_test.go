package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message groups (x_bus_group_by, docs/api.md): with several workers
// fetching from one consumer, each order's messages are processed one at
// a time in publish order, while different orders are processed in
// parallel.
func TestJetStreamGroupsOrderPerKeyParallelAcrossKeys(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}})
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	createConsumerRaw(t, nc, "ORD", "work", `{"durable_name":"work","ack_policy":"explicit","x_bus_group_by":{"header":"Order-Id"}}`)
	const keys, perKey, workers = 12, 8, 4
	for i := range perKey {
		for k := range keys {
			m := nats.NewMsg("ord.new")
			m.Header.Set("Order-Id", fmt.Sprint("o", k))
			m.Data = []byte(fmt.Sprint(i))
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	c, err := st.Consumer(ctx, "work")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu        sync.Mutex
		busy      = map[string]bool{} // keys being processed now
		order     = map[string][]string{}
		maxBusy   int
		processed int
		failures  []string
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				finished := processed == keys*perKey
				mu.Unlock()
				if finished {
					return
				}
				batch, err := c.Fetch(2, jetstream.FetchMaxWait(200*time.Millisecond))
				if err != nil {
					return
				}
				for m := range batch.Messages() {
					key := m.Headers().Get("Order-Id")
					mu.Lock()
					if busy[key] {
						failures = append(failures, "two messages of "+key+" out at once")
					}
					busy[key] = true
					maxBusy = max(maxBusy, len(busy))
					order[key] = append(order[key], string(m.Data()))
					mu.Unlock()
					time.Sleep(2 * time.Millisecond) // the work whose overlap the test measures
					mu.Lock()
					delete(busy, key)
					processed++
					mu.Unlock()
					if err := m.DoubleAck(ctx); err != nil {
						mu.Lock()
						failures = append(failures, err.Error())
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatal(strings.Join(failures, "; "))
	}
	if processed != keys*perKey {
		t.Fatalf("processed %d of %d", processed, keys*perKey)
	}
	want := make([]string, perKey)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	for k, got := range order {
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("key %s processed in order %v", k, got)
		}
	}
	if maxBusy < 2 {
		t.Errorf("at most %d keys were processed at once with %d workers", maxBusy, workers)
	}
	info, err := c.Info(ctx)
	if err != nil || info.NumPending != 0 || info.NumAckPending != 0 {
		t.Fatalf("after all acks: %+v, %v", info, err)
	}
}

// A held-back message is neither lost nor delivered out of order across
// a server restart, and num_pending counts it.
func TestJetStreamGroupsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startJSAt(t, dir)
	nc := connect(t, busURL(s))
	js, _ := jetstream.New(nc)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}})
	if err != nil {
		t.Fatal(err)
	}
	createConsumerRaw(t, nc, "ORD", "work", `{"durable_name":"work","ack_policy":"explicit","x_bus_group_by":{"token":2}}`)
	for _, subj := range []string{"ord.a.1", "ord.a.2", "ord.b.1", "ord.a.3"} {
		if _, err := js.Publish(ctx, subj, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := st.Consumer(ctx, "work")
	got := fetchSubjects(t, c, 10)
	if got != "ord.a.1 ord.b.1" {
		t.Fatalf("first fetch: %s", got)
	}
	info, err := c.Info(ctx)
	if err != nil || info.NumPending != 2 {
		t.Fatalf("num_pending with a.2 and a.3 held back: %+v, %v", info, err)
	}
	ackSeq(t, nc, c, 1) // a.1: a.2 waits for the next fetch, across the restart
	nc.Close()
	shutdown(t, s)

	s = startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, s) })
	nc = connect(t, busURL(s))
	js, _ = jetstream.New(nc)
	st, _ = js.Stream(ctx, "ORD")
	c, _ = st.Consumer(ctx, "work")
	if got := fetchSubjects(t, c, 10); got != "ord.a.2" {
		t.Fatalf("after the restart: %s", got)
	}
	ackSeq(t, nc, c, 2)
	if got := fetchSubjects(t, c, 10); got != "ord.a.3" {
		t.Fatalf("after a.2's ack: %s", got)
	}
}

// fetchSubjects fetches what is there now (no_wait) and returns the
// subjects, without acking.
func fetchSubjects(t *testing.T, c jetstream.Consumer, n int) string {
	t.Helper()
	b, err := c.FetchNoWait(n)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range b.Messages() {
		got = append(got, m.Subject())
	}
	return strings.Join(got, " ")
}

// ackSeq double-acks stream seq seq of consumer c, by its ack subject.
func ackSeq(t *testing.T, nc *nats.Conn, c jetstream.Consumer, seq uint64) {
	t.Helper()
	ci := c.CachedInfo()
	subj := fmt.Sprintf("$JS.ACK.%s.%s.1.%d.1.0.0", ci.Stream, ci.Name, seq)
	if _, err := nc.Request(subj, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestJetStreamGroupsConfigErrors(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	ctx := ctxT(t)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORD", Subjects: []string{"ord.>"}}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	for _, tc := range []struct{ cfg, want string }{
		{`{"durable_name":"x","ack_policy":"none","x_bus_group_by":{"token":2}}`, "requires ack_policy explicit"},
		{`{"durable_name":"x","ack_policy":"explicit","x_bus_group_by":{}}`, "exactly one of"},
		{`{"durable_name":"x","ack_policy":"explicit","x_bus_group_by":{"header":"a b"}}`, "not a valid header name"},
		{`{"durable_name":"x","ack_policy":"explicit","x_bus_group_by":{"token":0}}`, "exactly one of"},
	} {
		resp, err := nc.Request("$JS.API.CONSUMER.CREATE.ORD.x", []byte(`{"stream_name":"ORD","config":`+tc.cfg+`}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Error *struct {
				Code        int    `json:"code"`
				ErrCode     int    `json:"err_code"`
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil || r.Error == nil ||
			r.Error.Code != 400 || r.Error.ErrCode != 10400 || !strings.Contains(r.Error.Description, tc.want) {
			t.Errorf("%s: %s, want 400/10400 %q", tc.cfg, resp.Data, tc.want)
		}
	}
	createConsumerRaw(t, nc, "ORD", "g", `{"durable_name":"g","ack_policy":"explicit","x_bus_group_by":{"token":2}}`)
	resp, err := nc.Request("$JS.API.CONSUMER.CREATE.ORD.g", []byte(`{"stream_name":"ORD","config":{"durable_name":"g","ack_policy":"explicit","x_bus_group_by":{"token":3}}}`), 5*time.Second)
	if err != nil || !strings.Contains(string(resp.Data), "x_bus_group_by can not be updated") {
		t.Fatalf("update of the grouping: %s, %v", resp.Data, err)
	}
}
