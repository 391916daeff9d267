package tests

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// ttlScenario publishes with Nats-TTL to streams with and without
// allow_msg_ttl and reports the acks, then waits for the expiry.
func ttlScenario(t *testing.T, url string) []string {
	t.Helper()
	nc := connect(t, url)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "NOTTL", Subjects: []string{"nottl"}}); err != nil {
		t.Fatal(err)
	}
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TTL", Subjects: []string{"ttl.>"}, AllowMsgTTL: true})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	pub := func(subj, ttl string) {
		m := nats.NewMsg(subj)
		m.Header.Set("Nats-TTL", ttl)
		ack, err := js.PublishMsg(ctx, m)
		var apiErr *jetstream.APIError
		switch {
		case errors.As(err, &apiErr):
			out = append(out, fmt.Sprintf("%s ttl=%s: %d %s", subj, ttl, apiErr.ErrorCode, apiErr.Description))
		case err != nil:
			out = append(out, fmt.Sprintf("%s ttl=%s: %v", subj, ttl, err))
		default:
			out = append(out, fmt.Sprintf("%s ttl=%s: seq %d", subj, ttl, ack.Sequence))
		}
	}
	pub("nottl", "5s")
	pub("nottl", "bogus")
	pub("ttl.a", "bogus")
	pub("ttl.a", "500ms")
	pub("ttl.a", "1s")
	pub("ttl.b", "never")
	pub("ttl.c", "1h")
	upd := jetstream.StreamConfig{Name: "TTL", Subjects: []string{"ttl.>"}}
	_, err = js.UpdateStream(ctx, upd)
	out = append(out, fmt.Sprintf("disable ttl: %v", err))
	// The 1s message goes; the others stay.
	var info *jetstream.StreamInfo
	waitFor(10*time.Second, func() bool {
		var err error
		if info, err = s.Info(ctx); err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs == 2
	})
	out = append(out, fmt.Sprintf("after expiry: msgs=%d first=%d last=%d", info.State.Msgs, info.State.FirstSeq, info.State.LastSeq))
	return out
}

func TestMsgTTLMatchesReference(t *testing.T) {
	ref := ttlScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := ttlScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// kvTTLScenario is a bucket with limit markers: a key created with a
// TTL expires and leaves a marker that watchers see as a purge.
func kvTTLScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "sess", LimitMarkerTTL: time.Second})
	if err != nil {
		t.Fatalf("create bucket on %s: %v", url, err)
	}
	var out []string
	w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rev, err := kv.Create(ctx, "token", []byte("abc"), jetstream.KeyTTL(time.Second))
	out = append(out, fmt.Sprintf("create with ttl: rev=%d err=%v", rev, err))
	_, err = kv.Put(ctx, "keep", []byte("forever"))
	out = append(out, fmt.Sprintf("put: err=%v", err))
	for len(out) < 5 {
		select {
		case e := <-w.Updates():
			if e == nil {
				continue
			}
			out = append(out, fmt.Sprintf("watch: %s op=%s val=%q", e.Key(), e.Operation(), e.Value()))
		case <-ctx.Done():
			return append(out, "watch timed out")
		}
	}
	_, err = kv.Get(ctx, "token")
	out = append(out, fmt.Sprintf("get expired: %v", err))
	e, err := kv.Get(ctx, "keep")
	out = append(out, fmt.Sprintf("get kept: %s err=%v", e.Value(), err))
	rev, err = kv.Create(ctx, "token", []byte("again"))
	out = append(out, fmt.Sprintf("create again: err=%v", err != nil))
	_ = rev
	err = kv.Purge(ctx, "keep", jetstream.PurgeTTL(time.Second))
	out = append(out, fmt.Sprintf("purge with ttl: err=%v", err))
	return out
}

func TestKeyValueTTLMatchesReference(t *testing.T) {
	ref := kvTTLScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := kvTTLScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
