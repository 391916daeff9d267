package tests

import (
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// With no_header_support a server offers no headers, as the reference's
// (issue 23): INFO says headers false, nats.go then refuses to publish
// headers, a client's HPUB closes its connection without a word, and
// plain publishing still works.
func TestNoHeaderSupportMatchesReference(t *testing.T) {
	t.Parallel()
	b := startBus(t, server.Options{NoHeaderSupport: true})
	r := startReferenceWith(t, func(o *natsserver.Options) { o.NoHeaderSupport = true })
	scenarios := []string{
		quiet + "SUB a 1\r\nPUB a 2\r\nhi\r\n",
		"CONNECT {\"verbose\":false,\"headers\":true}\r\nSUB a 1\r\nHPUB a 12 14\r\nNATS/1.0\r\n\r\nhi\r\n",
	}
	for _, side := range []struct{ name, addr string }{{"bus", b.Addr().String()}, {"reference", refAddr(r)}} {
		if h := info(t, side.addr)["headers"]; h != false {
			t.Errorf("%s: INFO headers %v, want false", side.name, h)
		}
		nc := connect(t, "nats://"+side.addr)
		if nc.HeadersSupported() {
			t.Errorf("%s: nats.go sees header support", side.name)
		}
		if err := nc.PublishMsg(&nats.Msg{Subject: "a", Header: nats.Header{"X": []string{"1"}}}); err == nil {
			t.Errorf("%s: nats.go published headers", side.name)
		}
	}
	for _, in := range scenarios {
		want := normalizeFrames(exchange(t, refAddr(r), in))
		got := normalizeFrames(exchange(t, b.Addr().String(), in))
		if got != want {
			t.Errorf("input %q:\n  bus: %q\n  ref: %q", in, got, want)
		}
	}
}

// A subscriber that did not ask for headers in CONNECT gets a message
// published with headers without its header block, as MSG, as from the
// reference.
func TestHeadersStrippedForClientWithoutHeaders(t *testing.T) {
	t.Parallel()
	b := startBus(t, server.Options{})
	r := startReference(t, false)
	in := "CONNECT {\"verbose\":false}\r\nSUB a 1\r\nPING\r\n"
	for _, side := range []struct{ name, addr string }{{"bus", b.Addr().String()}, {"reference", refAddr(r)}} {
		rc := dialRaw(t, side.addr)
		rc.send(in)
		rc.expect("PONG\r\n")
		nc := connect(t, "nats://"+side.addr)
		if err := nc.PublishMsg(&nats.Msg{Subject: "a", Data: []byte("hi"), Header: nats.Header{"X": []string{"1"}}}); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		if line := rc.line(); line != "MSG a 1 2\r\n" {
			t.Errorf("%s: got %q, want MSG a 1 2", side.name, line)
		}
		if line := rc.line(); line != "hi\r\n" {
			t.Errorf("%s: payload %q", side.name, line)
		}
	}
}
