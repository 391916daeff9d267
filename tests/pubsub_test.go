package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

func TestPubSubThroughNatsGo(t *testing.T) {
	s := startBus(t, server.Options{})
	nc := connect(t, busURL(s))
	sub, err := nc.SubscribeSync("greet.*")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("greet.joe", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.NextMsg(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Subject != "greet.joe" || string(msg.Data) != "hello" {
		t.Fatalf("got %q %q", msg.Subject, msg.Data)
	}
	_, err = nc.Request("nobody", nil, time.Second)
	if err != nats.ErrNoResponders {
		t.Fatalf("request to nobody: %v, want no responders", err)
	}
}
