package tests

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

func TestWildcardsThroughNatsGo(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	patterns := []string{"orders.*", "orders.>", ">", "orders.eu.new", "*.eu.*"}
	subs := make([]*nats.Subscription, len(patterns))
	for i, p := range patterns {
		var err error
		if subs[i], err = nc.SubscribeSync(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range []string{"orders.eu.new", "orders.us", "billing"} {
		if err := nc.Publish(subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]string{
		"orders.*":      {"orders.us"},
		"orders.>":      {"orders.eu.new", "orders.us"},
		">":             {"orders.eu.new", "orders.us", "billing"},
		"orders.eu.new": {"orders.eu.new"},
		"*.eu.*":        {"orders.eu.new"},
	}
	for i, p := range patterns {
		for _, subj := range want[p] {
			msg, err := subs[i].NextMsg(2 * time.Second)
			if err != nil {
				t.Fatalf("%s: waiting for %s: %v", p, subj, err)
			}
			if msg.Subject != subj {
				t.Fatalf("%s: got %s, want %s", p, msg.Subject, subj)
			}
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, p := range patterns {
		if n, _, _ := subs[i].Pending(); n != 0 {
			t.Fatalf("%s: %d unexpected extra messages", p, n)
		}
	}
}

func TestQueueGroupsDeliverOncePerGroupAndSpread(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	pub := connect(t, busURL(s))
	const members, msgs = 4, 2000
	var mu sync.Mutex
	perMember := make([]int, members)
	seen := map[string]int{}
	for i := 0; i < members; i++ {
		nc := connect(t, busURL(s))
		_, err := nc.QueueSubscribe("work", "workers", func(m *nats.Msg) {
			mu.Lock()
			perMember[i]++
			seen[string(m.Data)]++
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := pub.SubscribeSync("work")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < msgs; i++ {
		if err := pub.Publish("work", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == msgs
	})
	mu.Lock()
	for k, n := range seen {
		if n != 1 {
			t.Errorf("message %s delivered %d times to the group", k, n)
		}
	}
	for i, n := range perMember {
		// Random choice: each member's share is far from 0 and from all.
		if n < msgs/members/2 || n > msgs/members*2 {
			t.Errorf("member %d got %d of %d messages: not spread", i, n, msgs)
		}
	}
	mu.Unlock()
	eventually(t, 5*time.Second, func() bool { n, _, _ := plain.Pending(); return n == msgs })
}

func TestRequestReply(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	responder := connect(t, busURL(s))
	if _, err := responder.Subscribe("svc.echo", func(m *nats.Msg) {
		_ = m.Respond(append([]byte("echo:"), m.Data...))
	}); err != nil {
		t.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	for i := 0; i < 50; i++ {
		msg, err := nc.Request("svc.echo", []byte(fmt.Sprint(i)), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if string(msg.Data) != fmt.Sprintf("echo:%d", i) {
			t.Fatalf("got %q", msg.Data)
		}
	}
	start := time.Now()
	if _, err := nc.Request("svc.nobody", nil, 5*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("got %v, want ErrNoResponders", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("no-responders answer was not immediate")
	}
}

func TestHeadersRoundTrip(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	sub, err := nc.SubscribeSync("h")
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg("h")
	msg.Header.Add("X-Trace", "1")
	msg.Header.Add("X-Multi", "a")
	msg.Header.Add("X-Multi", "b")
	msg.Data = []byte("body")
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	got, err := sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("X-Trace") != "1" || len(got.Header.Values("X-Multi")) != 2 || string(got.Data) != "body" {
		t.Fatalf("got header %v data %q", got.Header, got.Data)
	}
}

func TestMaxPayload(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	if nc.MaxPayload() != 1<<20 {
		t.Fatalf("max payload %d", nc.MaxPayload())
	}
	sub, err := nc.SubscribeSync("big")
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), int(nc.MaxPayload()))
	if err := nc.Publish("big", big); err != nil {
		t.Fatal(err)
	}
	got, err := sub.NextMsg(5 * time.Second)
	if err != nil || !bytes.Equal(got.Data, big) {
		t.Fatalf("max-size message did not round-trip: %v", err)
	}
	if err := nc.Publish("big", append(big, 'y')); !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("oversize publish: %v, want ErrMaxPayload", err)
	}
	// A client that skips the check gets the reference's error and is cut off.
	rc := dialRaw(t, s.Addr().String())
	rc.send("CONNECT {\"verbose\":false}\r\nPUB big 1048577\r\n")
	if got := rc.expectClosed(); got != "-ERR 'Maximum Payload Violation'\r\n" {
		t.Fatalf("got %q", got)
	}
}

func TestManySubscriptionsOnOneConnection(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	const n = 10000
	var got sync.WaitGroup
	got.Add(n)
	for i := 0; i < n; i++ {
		if _, err := nc.Subscribe(fmt.Sprintf("many.%d", i), func(*nats.Msg) { got.Done() }); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if v := s.Varz(); v.Subscriptions != n {
		t.Fatalf("varz subscriptions %d, want %d", v.Subscriptions, n)
	}
	pub := connect(t, busURL(s))
	for i := 0; i < n; i++ {
		if err := pub.Publish(fmt.Sprintf("many.%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitGroup(t, &got, 10*time.Second)
}

func TestHundredConcurrentClients(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	const clients, msgs = 100, 20
	sink := connect(t, busURL(s))
	var received sync.WaitGroup
	received.Add(clients * msgs)
	if _, err := sink.Subscribe("load.>", func(*nats.Msg) { received.Done() }); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := nats.Connect(busURL(s))
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			for j := 0; j < msgs; j++ {
				if err := nc.Publish(fmt.Sprintf("load.%d", i), []byte("x")); err != nil {
					errs <- err
					return
				}
			}
			if err := nc.Flush(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitGroup(t, &received, 10*time.Second)
}

func TestDrain(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc, err := nats.Connect(busURL(s))
	if err != nil {
		t.Fatal(err)
	}
	var count int
	var mu sync.Mutex
	if _, err := nc.Subscribe("d", func(*nats.Msg) { mu.Lock(); count++; mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil { // the server has the subscription before anything is published
		t.Fatal(err)
	}
	pub := connect(t, busURL(s))
	for i := 0; i < 100; i++ {
		_ = pub.Publish("d", nil)
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("drain did not close the connection")
	}
	if nc.LastError() != nil {
		t.Fatalf("drain error: %v", nc.LastError())
	}
	mu.Lock()
	defer mu.Unlock()
	if count != 100 {
		t.Fatalf("handled %d of 100 messages", count)
	}
}

func TestEchoOff(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s), nats.NoEcho())
	other := connect(t, busURL(s))
	own, _ := nc.SubscribeSync("e")
	theirs, _ := other.SubscribeSync("e")
	_ = nc.Flush()
	_ = other.Flush()
	if err := nc.Publish("e", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := theirs.NextMsg(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	_ = nc.Flush()
	if n, _, _ := own.Pending(); n != 0 {
		t.Fatal("echo off still delivered own message")
	}
}

func TestAutoUnsubscribe(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	sub, _ := nc.SubscribeSync("a")
	if err := sub.AutoUnsubscribe(3); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		_ = nc.Publish("a", nil)
	}
	_ = nc.Flush()
	for i := 0; i < 3; i++ {
		if _, err := sub.NextMsg(2 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Second, func() bool { return s.Varz().Subscriptions == 0 })
}

func TestReconnectAfterServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	url := busURL(first)
	addr := first.Addr().String()
	reconnected := make(chan struct{}, 1)
	nc := connect(t, url, nats.ReconnectWait(20*time.Millisecond), nats.MaxReconnects(-1),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	sub, _ := nc.SubscribeSync("r")
	_ = nc.Flush()
	shutdown(t, first)

	second := startBusAt(t, addr, dir)
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("client did not reconnect")
	}
	_ = second
	// The client re-sends its subscriptions on reconnect.
	if err := nc.Publish("r", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if msg, err := sub.NextMsg(2 * time.Second); err != nil || string(msg.Data) != "again" {
		t.Fatalf("after reconnect: %v", err)
	}
}

func waitGroup(t *testing.T, wg *sync.WaitGroup, timeout time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("not everything arrived within %v", timeout)
	}
}
