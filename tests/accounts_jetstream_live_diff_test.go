package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// The live JetStream limits scenario: account A starts with room for
// three streams, 1MB of memory and three consumers a stream; the reload
// lowers them to one stream, 1KB and one consumer.
const liveJSBefore = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q }
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    jetstream { max_streams: 3, max_mem: 1MB, max_file: 1MB, max_consumers: 3, max_ack_pending: 100 }
  }
}
`

const liveJSAfter = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q }
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    jetstream { max_streams: 1, max_mem: 1KB, max_file: 1MB, max_consumers: 1, max_ack_pending: 10 }
  }
}
`

func liveJSOptions(storeDir string, after bool) server.Options {
	limits := &server.AccountJetStream{MaxStreams: 3, MaxMemory: 1 << 20, MaxStore: 1 << 20, MaxConsumers: 3, MaxAckPending: 100}
	if after {
		limits = &server.AccountJetStream{MaxStreams: 1, MaxMemory: 1 << 10, MaxStore: 1 << 20, MaxConsumers: 1, MaxAckPending: 10}
	}
	return server.Options{Host: "127.0.0.1", StoreDir: storeDir, JetStream: true, Accounts: []server.Account{
		{Name: "A", Users: []server.User{{Name: "a1", Password: accountsPass}}, JetStream: limits},
	}}
}

// TestAccountsReloadLowersJetStreamLimitsLive lowers an account's
// JetStream limits by a config reload on bus and the reference alike:
// the streams and consumers already over them stay, the account info
// shows the new ones, a new stream or consumer is refused, a publish to
// a memory stream over the lowered max_mem is refused, and one asking
// for more ack pending than the new bound is refused.
func TestAccountsReloadLowersJetStreamLimitsLive(t *testing.T) {
	t.Parallel()
	busDir := t.TempDir()
	bus := startBus(t, liveJSOptions(busDir, false))
	ref, path := startReferenceFile(t, liveJSBefore)
	reloads := map[string]func(t *testing.T){
		"bus": func(t *testing.T) {
			if err := bus.Reload(liveJSOptions(busDir, true)); err != nil {
				t.Fatal(err)
			}
		},
		"reference": func(t *testing.T) {
			writeReferenceConfig(t, path, liveJSAfter)
			if err := ref.Reload(); err != nil {
				t.Fatal(err)
			}
		},
	}
	urls := map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()}
	outcomes := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		t.Run(side, func(t *testing.T) {
			js, ctx := accountsJS(t, urls[side], "a1")
			var steps []string
			for _, name := range []string{"M1", "M2"} {
				_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jetstream.MemoryStorage})
				steps = append(steps, "create "+name+": "+jsErrOutcome(err))
			}
			for _, name := range []string{"C1", "C2"} {
				_, err := js.CreateConsumer(ctx, "M1", jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy})
				steps = append(steps, "consumer "+name+": "+jsErrOutcome(err))
			}
			_, err := js.Publish(ctx, "M1.x", make([]byte, 2000))
			steps = append(steps, "publish 2000 bytes to M1: "+jsErrOutcome(err))
			reloads[side](t)
			info, err := js.AccountInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			steps = append(steps, fmt.Sprintf("limits: memory %d, store %d, streams %d, consumers %d, ack pending %d; streams %d",
				info.Limits.MaxMemory, info.Limits.MaxStore, info.Limits.MaxStreams, info.Limits.MaxConsumers, info.Limits.MaxAckPending, info.Streams))
			_, err = js.CreateStream(ctx, jetstream.StreamConfig{Name: "M3", Subjects: []string{"M3.>"}, Storage: jetstream.MemoryStorage})
			steps = append(steps, "create M3: "+jsErrOutcome(err))
			_, err = js.CreateConsumer(ctx, "M2", jetstream.ConsumerConfig{Durable: "C1", AckPolicy: jetstream.AckExplicitPolicy})
			steps = append(steps, "consumer C1 on M2: "+jsErrOutcome(err))
			_, err = js.CreateConsumer(ctx, "M1", jetstream.ConsumerConfig{Durable: "C3", AckPolicy: jetstream.AckExplicitPolicy})
			steps = append(steps, "consumer C3 on M1: "+jsErrOutcome(err))
			_, err = js.CreateConsumer(ctx, "M2", jetstream.ConsumerConfig{Durable: "P", AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 50})
			steps = append(steps, "consumer asking 50 ack pending: "+jsErrOutcome(err))
			// The new max_mem holds for the very next publish: the
			// reload checks the streams against it before it returns.
			_, err = js.Publish(ctx, "M2.x", []byte("small"))
			steps = append(steps, "publish to M2 over max_mem: "+jsErrOutcome(err))
			names := js.StreamNames(ctx)
			var list []string
			for n := range names.Name() {
				list = append(list, n)
			}
			steps = append(steps, "streams kept: "+strings.Join(sortedCopy(list), ","))
			t.Log(lines(steps...))
			outcomes[side] = steps
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}

func sortedCopy(list []string) []string {
	out := append([]string(nil), list...)
	sortStrings(out)
	return out
}
