package tests

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// BenchmarkWebSocketPubSub is pub→sub through one server over TCP and
// over WebSocket, bus and the reference, 16 B and 1 KiB messages: the
// cost of the frame layer beside the plain path.
//
//	go test -run XXX -bench BenchmarkWebSocketPubSub -benchtime 200000x ./tests
func BenchmarkWebSocketPubSub(b *testing.B) {
	bus, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir(),
		WebSocket: server.WebSocketOptions{Host: "127.0.0.1", Port: -1, NoTLS: true}})
	if err != nil {
		b.Fatal(err)
	}
	if err := bus.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { shutdown(b, bus) })
	ro := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Websocket: natsserver.WebsocketOpts{Host: "127.0.0.1", Port: -1, NoTLS: true}}
	ref := startReferenceWith(b, func(o *natsserver.Options) { *o = *ro; ro = o }) // ro: the options the reference runs with
	urls := map[string]string{
		"bus/tcp": busURL(bus), "bus/ws": "ws://" + bus.WebSocketAddr().String(),
		"ref/tcp": "nats://" + refAddr(ref), "ref/ws": "ws://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(ro.Websocket.Port)),
	}
	for _, size := range []int{16, 1024} {
		for _, name := range []string{"bus/tcp", "bus/ws", "ref/tcp", "ref/ws"} {
			b.Run(fmt.Sprintf("%s/%dB", name, size), func(b *testing.B) { benchWSPubSub(b, urls[name], size) })
		}
	}
}

func benchWSPubSub(b *testing.B, url string, size int) {
	pub := connect(b, url)
	sub := connect(b, url)
	done := make(chan struct{})
	var n atomic.Int64 // the callback's goroutine counts, the benchmark reads
	s, err := sub.Subscribe("bench", func(*nats.Msg) {
		if n.Add(1) == int64(b.N) {
			close(done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	_ = s.SetPendingLimits(-1, -1)
	_ = sub.Flush()
	msg := make([]byte, size)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		_ = pub.Publish("bench", msg)
	}
	_ = pub.Flush()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		b.Fatalf("received %d of %d (a server that cuts a slow consumer loses the rest)", n.Load(), b.N)
	}
}
