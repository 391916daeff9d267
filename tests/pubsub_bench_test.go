package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// BenchmarkPubSub publishes through a server to one subscriber with
// nats.go, for bus and for the embedded reference side by side:
//
//	go test ./tests -run '^$' -bench PubSub -benchtime 200000x
func BenchmarkPubSub(b *testing.B) {
	servers := map[string]func() string{
		"server=bus": func() string {
			s, err := server.New(server.Options{Host: "127.0.0.1", StoreDir: b.TempDir()})
			if err != nil || s.Start() != nil {
				b.Fatal("start bus")
			}
			b.Cleanup(func() { shutdown(b, s) })
			return busURL(s)
		},
		"server=nats-server": func() string { return "nats://" + refAddr(startReferenceB(b)) },
	}
	for _, name := range []string{"server=nats-server", "server=bus"} {
		url := servers[name]()
		for _, size := range []int{16, 1024} {
			b.Run(fmt.Sprintf("%s/size=%d", name, size), func(b *testing.B) {
				pub, err := nats.Connect(url)
				if err != nil {
					b.Fatal(err)
				}
				defer pub.Close()
				sub, err := nats.Connect(url)
				if err != nil {
					b.Fatal(err)
				}
				defer sub.Close()
				done := make(chan struct{})
				n := 0
				s, _ := sub.Subscribe("bench", func(*nats.Msg) {
					if n++; n == b.N {
						close(done)
					}
				})
				_ = s.SetPendingLimits(-1, -1)
				_ = sub.Flush()
				payload := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_ = pub.Publish("bench", payload)
				}
				_ = pub.Flush()
				select {
				case <-done:
				case <-time.After(time.Minute):
					b.Fatalf("received %d of %d", n, b.N)
				}
			})
		}
	}
}
