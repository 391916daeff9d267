package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

func TestZZSnapDebug(t *testing.T) {
	s := startBus(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	js, _ := jetstream.New(nc)
	ctx := ctxT(t)
	js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	js.Publish(ctx, "orders.x", []byte("hi"))
	sub, _ := nc.SubscribeSync("_INBOX.snap")
	resp, err := nc.Request("$JS.API.STREAM.SNAPSHOT.ORDERS", []byte(`{"deliver_subject":"_INBOX.snap"}`), time.Second)
	t.Logf("%v %s", err, resp.Data)
	for {
		m, err := sub.NextMsg(3 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("got %d bytes reply %q hdr %v", len(m.Data), m.Reply, m.Header)
		if len(m.Data) == 0 {
			return
		}
		m.Respond(nil)
	}
}
