package client

import (
	"context"
	"testing"
)

// The typed layer alone, without the network: what Publish adds before
// nats.go and what Subscribe adds after it.
func BenchmarkEncodeEvent(b *testing.B) {
	c := &Conn{opts: Options{}.withDefaults()}
	ctx := context.Background()
	for _, codec := range []Codec{MsgPack{}, JSON{}} {
		b.Run(codec.ContentType(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ev := Event[payload]{Data: payload{N: 42, S: "tea and a cup"}}
				if _, err := encodeEvent(ctx, c, "orders.placed", &ev, codec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeEvent(b *testing.B) {
	c := &Conn{opts: Options{}.withDefaults()}
	for _, codec := range []Codec{MsgPack{}, JSON{}} {
		ev := Event[payload]{Data: payload{N: 42, S: "tea and a cup"}}
		msg, _ := encodeEvent(context.Background(), c, "orders.placed", &ev, codec)
		b.Run(codec.ContentType(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeEvent[payload](msg.Subject, msg.Header, msg.Data, MsgPack{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
