package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/client"
)

func TestPublishSubscribe(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{Source: "/shop"})
		got := make(chan client.Event[order], 2)
		traces := make(chan string, 2)
		sub, err := client.Subscribe(c, "orders.*", func(ctx context.Context, ev client.Event[order]) {
			traces <- client.TraceParent(ctx)
			got <- ev
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sub.Unsubscribe() })
		if err := c.NATS().Flush(); err != nil {
			t.Fatal(err)
		}
		parent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		ctx := client.ContextWithTraceParent(context.Background(), parent)
		if err := client.Publish(ctx, c, "orders.placed", order{ID: "o-1", Total: 3}, client.WithID("o-1"), client.WithType("shop.order_placed")); err != nil {
			t.Fatal(err)
		}
		// Per-call JSON on a msgpack connection: the subscriber follows Content-Type.
		if err := client.Publish(context.Background(), c, "orders.paid", order{ID: "o-2"}, client.WithCodec(client.JSON{})); err != nil {
			t.Fatal(err)
		}
		first := receive(t, got, 5*time.Second)
		if first.Data.ID != "o-1" || first.ID != "o-1" || first.Type != "shop.order_placed" || first.Source != "/shop" || first.Subject != "orders.placed" {
			t.Fatalf("first event %+v", first)
		}
		if tp := receive(t, traces, time.Second); !strings.HasPrefix(tp, parent[:36]) || tp == parent {
			t.Fatalf("handler trace %q does not continue %q", tp, parent)
		}
		second := receive(t, got, 5*time.Second)
		if second.Data.ID != "o-2" || second.Header.Get(client.HeaderContentType) != client.ContentTypeJSON || second.Type != "client_test.order" {
			t.Fatalf("second event %+v", second)
		}
		if tp := receive(t, traces, time.Second); strings.HasPrefix(tp, parent[:36]) {
			t.Fatalf("a publish without a trace in its context joined another trace: %q", tp)
		}
	})
}
