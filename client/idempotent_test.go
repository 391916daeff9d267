package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

// storesFor lists the stores, each on the server at url: all work on
// bus and on nats-server.
func storesFor(t *testing.T, url string) map[string]client.Store {
	t.Helper()
	c := connect(t, url, client.Options{})
	ctx := testContext(t)
	stream, err := client.NewStreamStore(ctx, c, client.StreamStoreOptions{Stream: "IDEM", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := client.NewKVStore(ctx, c, client.KVStoreOptions{Bucket: "idem", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]client.Store{"memory": client.NewMemoryStore(client.MemoryStoreOptions{}), "stream": stream, "kv": kv}
}

func onEachStore(t *testing.T, body func(t *testing.T, url string, store client.Store)) {
	t.Helper()
	for server, start := range map[string]func(testing.TB) string{"bus": startBus, "nats-server": startReference} {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			url := start(t)
			for name, store := range storesFor(t, url) {
				t.Run(name, func(t *testing.T) { body(t, url, store) })
			}
		})
	}
}

func TestStoreRecordsIDs(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, _ string, store client.Store) {
		ctx := testContext(t)
		for _, id := range []string{"o-1", "a.b.*>", "with space/and:colon", "ünïcode"} {
			if seen, err := store.Seen(ctx, id); err != nil || seen {
				t.Fatalf("%q seen before recording: %v, %v", id, seen, err)
			}
			if err := store.Record(ctx, id); err != nil {
				t.Fatal(err)
			}
			if seen, err := store.Seen(ctx, id); err != nil || !seen {
				t.Fatalf("%q not seen after recording: %v, %v", id, seen, err)
			}
		}
		if seen, _ := store.Seen(ctx, "a.b"); seen {
			t.Fatal("a prefix of a recorded id counts as seen")
		}
	})
}

func TestMemoryStoreForgetsAfterTTL(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	store := client.NewMemoryStore(client.MemoryStoreOptions{TTL: time.Minute, Now: func() time.Time { return now }})
	ctx := context.Background()
	_ = store.Record(ctx, "x")
	now = now.Add(59 * time.Second)
	if seen, _ := store.Seen(ctx, "x"); !seen {
		t.Fatal("forgotten before the TTL")
	}
	now = now.Add(time.Second)
	if seen, _ := store.Seen(ctx, "x"); seen {
		t.Fatal("remembered past the TTL")
	}
}

// Duplicates get past the stream's de-duplication (a publisher that does
// not set Nats-Msg-Id, or one outside the duplicate window) and are all
// delivered; the side effect still happens once per event id.
func TestIdempotentHandlerRunsSideEffectOnce(t *testing.T) {
	t.Parallel()
	onEachStore(t, func(t *testing.T, url string, store client.Store) {
		c := connect(t, url, client.Options{})
		cfg := jobsConfig("ship-" + storeName(t))
		cfg.FilterSubject = "jobs." + storeName(t)
		var mu sync.Mutex
		shipped := map[string]int{}
		deliveries := 0
		h := client.Idempotent(store, func(ctx context.Context, ev client.Event[order]) error {
			mu.Lock()
			defer mu.Unlock()
			shipped[ev.ID]++
			return nil
		})
		startWorker(t, c, cfg, func(ctx context.Context, ev client.Event[order]) error {
			mu.Lock()
			deliveries++
			mu.Unlock()
			return h(ctx, ev)
		})
		for _, id := range []string{"o-1", "o-1", "o-2", "o-1"} {
			data, _ := client.MsgPack{}.Marshal(order{ID: id})
			msg := &nats.Msg{Subject: cfg.FilterSubject, Data: data, Header: nats.Header{
				client.HeaderID: {id}, client.HeaderContentType: {client.ContentTypeMsgPack},
			}}
			if _, err := c.JetStream().PublishMsg(testContext(t), msg); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, 5*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return deliveries == 4
		})
		eventually(t, 5*time.Second, func() bool { return settled(t, c, cfg.Consumer) })
		mu.Lock()
		defer mu.Unlock()
		if shipped["o-1"] != 1 || shipped["o-2"] != 1 {
			t.Fatalf("side effects %v, want one per event id", shipped)
		}
	})
}

func storeName(t *testing.T) string {
	name := t.Name()
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[i+1:]
		}
	}
	return name
}

type failingStore struct{}

func (failingStore) Seen(context.Context, string) (bool, error) {
	return false, errors.New("store down")
}
func (failingStore) Record(context.Context, string) error { return errors.New("store down") }

func TestIdempotentRetriesWhenStoreFails(t *testing.T) {
	t.Parallel()
	ran := false
	h := client.Idempotent(failingStore{}, func(context.Context, client.Event[order]) error { ran = true; return nil })
	if err := h(context.Background(), client.Event[order]{ID: "x"}); err == nil || ran {
		t.Fatalf("got %v (handler ran: %v), want the store's error before running", err, ran)
	}
	if err := h(context.Background(), client.Event[order]{}); err != nil || !ran {
		t.Fatalf("an event without id must just run: %v", err)
	}
}
