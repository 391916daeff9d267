package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// The JetStream-per-account scenario: A with JetStream, B with limits,
// N without JetStream, on a server with JetStream.
const accountsJSReferenceConfig = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q }
accounts {
  A { users: [ {user: a1, password: pw} ], jetstream: enabled }
  B {
    users: [ {user: b1, password: pw} ]
    jetstream { max_streams: 2, max_consumers: 1, max_mem: 1MB, max_file: 1MB, max_ack_pending: 5 }
  }
  N { users: [ {user: n1, password: pw} ] }
}
`

func accountsJSBusOptions(storeDir string) server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	return server.Options{
		Host: "127.0.0.1", StoreDir: storeDir, JetStream: true,
		Accounts: []server.Account{
			{Name: "A", Users: []server.User{user("a1")}, JetStream: &server.AccountJetStream{}},
			{Name: "B", Users: []server.User{user("b1")}, JetStream: &server.AccountJetStream{
				MaxStreams: 2, MaxConsumers: 1, MaxMemory: 1 << 20, MaxStore: 1 << 20, MaxAckPending: 5}},
			{Name: "N", Users: []server.User{user("n1")}},
		},
	}
}

// accountsJS is a JetStream client as one of the scenario's users.
func accountsJS(t *testing.T, url, user string) (jetstream.JetStream, context.Context) {
	t.Helper()
	js, err := jetstream.New(connectAs(t, url, user))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return js, ctx
}

// jsErrOutcome describes an error as its JetStream code and text, or ok.
func jsErrOutcome(err error) string {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &apiErr):
		return fmt.Sprintf("%d %s", apiErr.ErrorCode, apiErr.Description)
	}
	return err.Error()
}

// TestAccountsJetStreamSeparate checks, on bus and the reference alike,
// that streams, KV buckets and object stores of one name in two accounts
// are different ones, and that an account without a jetstream key has
// no JetStream.
func TestAccountsJetStreamSeparate(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsJSBusOptions(t.TempDir()))
	ref := startReferenceConfig(t, accountsJSReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		var steps []string
		ja, ctx := accountsJS(t, url, "a1")
		jb, _ := accountsJS(t, url, "b1")
		for _, js := range []jetstream.JetStream{ja, jb} {
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
			steps = append(steps, "create ORDERS: "+jsErrOutcome(err))
		}
		for i := range 2 {
			if _, err := ja.Publish(ctx, "orders.a", fmt.Appendf(nil, "a%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := jb.Publish(ctx, "orders.b", []byte("b")); err != nil {
			t.Fatal(err)
		}
		for _, side := range []struct {
			name string
			js   jetstream.JetStream
		}{{"A", ja}, {"B", jb}} {
			name, js := side.name, side.js
			s, err := js.Stream(ctx, "ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			info, _ := s.Info(ctx)
			m, err := s.GetLastMsgForSubject(ctx, "orders.>")
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, fmt.Sprintf("%s ORDERS: %d messages, last %s %s", name, info.State.Msgs, m.Subject, m.Data))
		}

		kva, err := ja.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kva.Put(ctx, "color", []byte("blue")); err != nil {
			t.Fatal(err)
		}
		kvb, err := jb.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg"})
		steps = append(steps, "B creates its cfg bucket: "+jsErrOutcome(err))
		if err == nil {
			_, err = kvb.Get(ctx, "color")
			steps = append(steps, fmt.Sprintf("B reads color: %v", err))
		}
		obj, err := ja.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := obj.PutString(ctx, "readme", "hello"); err != nil {
			t.Fatal(err)
		}
		// B has its two streams already: its object store is refused.
		_, err = jb.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files"})
		steps = append(steps, "B creates a third stream: "+jsErrOutcome(err))
		got, err := obj.GetString(ctx, "readme")
		steps = append(steps, fmt.Sprintf("A reads its object: %q %v", got, err))

		jn, _ := accountsJS(t, url, "n1")
		_, err = jn.AccountInfo(ctx)
		steps = append(steps, fmt.Sprintf("N account info: %v", err))
		return steps
	})
}

// TestAccountsJetStreamLimits checks account B's limits and their
// errors, and the limits `$JS.API.INFO` reports, against the reference.
func TestAccountsJetStreamLimits(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsJSBusOptions(t.TempDir()))
	ref := startReferenceConfig(t, accountsJSReferenceConfig)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		var steps []string
		js, ctx := accountsJS(t, url, "b1")
		info, err := js.AccountInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l := info.Limits
		steps = append(steps, fmt.Sprintf("limits: memory %d store %d streams %d consumers %d ack pending %d",
			l.MaxMemory, l.MaxStore, l.MaxStreams, l.MaxConsumers, l.MaxAckPending))
		create := func(cfg jetstream.StreamConfig) {
			_, err := js.CreateStream(ctx, cfg)
			steps = append(steps, "create "+cfg.Name+": "+jsErrOutcome(err))
		}
		create(jetstream.StreamConfig{Name: "BIGMEM", Subjects: []string{"m.>"}, Storage: jetstream.MemoryStorage, MaxBytes: 2 << 20})
		create(jetstream.StreamConfig{Name: "BIGFILE", Subjects: []string{"f.>"}, MaxBytes: 2 << 20})
		create(jetstream.StreamConfig{Name: "MANYCONS", Subjects: []string{"c.>"}, MaxConsumers: 5})
		create(jetstream.StreamConfig{Name: "ONE", Subjects: []string{"one.>"}})
		create(jetstream.StreamConfig{Name: "TWO", Subjects: []string{"two.>"}})
		create(jetstream.StreamConfig{Name: "THREE", Subjects: []string{"three.>"}})
		consumer := func(cfg jetstream.ConsumerConfig) {
			_, err := js.CreateConsumer(ctx, "ONE", cfg)
			steps = append(steps, "consumer "+cfg.Durable+": "+jsErrOutcome(err))
		}
		consumer(jetstream.ConsumerConfig{Durable: "greedy", MaxAckPending: 10})
		consumer(jetstream.ConsumerConfig{Durable: "first"})
		consumer(jetstream.ConsumerConfig{Durable: "second"})
		return steps
	})
}

// TestAccountsJetStreamRestart checks the store layout: the global
// account's streams stay where they always were, each account's are in a
// directory of its own, and all of them open again after a restart.
func TestAccountsJetStreamRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := accountsJSBusOptions(dir)
	opts.Authorization = server.Authorization{Users: []server.User{{Name: "g", Password: accountsPass}}}
	s, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	url := busURL(s)
	for _, u := range []string{"g", "a1", "b1"} {
		js, ctx := accountsJS(t, url, u)
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if _, err := js.Publish(ctx, "orders.x", []byte(u)); err != nil {
			t.Fatal(err)
		}
	}
	shutdown(t, s)
	for _, d := range []string{"jetstream/ORDERS", "accounts/A/jetstream/ORDERS", "accounts/B/jetstream/ORDERS"} {
		if _, err := os.Stat(filepath.Join(dir, d)); err != nil {
			t.Errorf("store: %v", err)
		}
	}
	s2 := startBus(t, opts)
	for _, u := range []string{"g", "a1", "b1"} {
		js, ctx := accountsJS(t, busURL(s2), u)
		st, err := js.Stream(ctx, "ORDERS")
		if err != nil {
			t.Fatalf("%s after restart: %v", u, err)
		}
		m, err := st.GetLastMsgForSubject(ctx, "orders.x")
		if err != nil || string(m.Data) != u {
			t.Errorf("%s's ORDERS after restart: %v %v", u, m, err)
		}
	}
}

// The account's JetStream API answers in its own subject space only: a
// global user's request for an account's stream finds nothing of it.
func TestAccountsJetStreamNotShared(t *testing.T) {
	t.Parallel()
	opts := accountsJSBusOptions(t.TempDir())
	opts.Authorization = server.Authorization{Users: []server.User{{Name: "g", Password: accountsPass}}}
	s := startBus(t, opts)
	js, ctx := accountsJS(t, busURL(s), "a1")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SECRET", Subjects: []string{"secret.>"}}); err != nil {
		t.Fatal(err)
	}
	g := connectAs(t, busURL(s), "g")
	m, err := g.Request("$JS.API.STREAM.INFO.SECRET", nil, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	mustJSON(t, m.Data, &doc)
	if code := field(doc, "error.err_code"); code != float64(10059) {
		t.Errorf("the global account sees A's stream: %s", m.Data)
	}
	sub, err := g.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "secret.x", []byte("s")); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("the global account received %s %q", m.Subject, m.Data)
	}
}
