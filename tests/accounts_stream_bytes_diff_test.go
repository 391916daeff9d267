package tests

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// An account's bounds on one stream's max_bytes, from one config file
// on both servers (nats.go's TestAccountInfo/server_with_limits_set):
// $JS.API.INFO reports them, a stream without max_bytes is refused
// (10113), one over its storage's bound too (10122), at create and at
// update, and one within the bound is made.
func TestAccountStreamBytesBoundsMatchReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, `
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
jetstream { store_dir: "STORE" }
accounts {
  A {
    users: [ {user: a1, password: pw} ]
    jetstream: {
      max_mem: 64MB, max_file: 32MB, max_streams: 10, max_consumers: 20, max_ack_pending: 100,
      memory_max_stream_bytes: 2048, store_max_stream_bytes: 4096, max_stream_bytes: true
    }
  }
}
`)
	bothSides(t, "nats://"+p.busClient, "nats://"+p.refClient, func(t *testing.T, url string) []string {
		js, ctx := accountsJS(t, url, "a1")
		info, err := js.AccountInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		steps := []string{fmt.Sprintf("limits %+v", info.Limits)}
		for _, tc := range []struct {
			name     string
			storage  jetstream.StorageType
			maxBytes int64
		}{
			{"file without max_bytes", jetstream.FileStorage, 0},
			{"file over the bound", jetstream.FileStorage, 8192},
			{"file at the bound", jetstream.FileStorage, 4096},
			{"memory over the bound", jetstream.MemoryStorage, 4096},
			{"memory at the bound", jetstream.MemoryStorage, 2048},
		} {
			name := fmt.Sprintf("S%d", len(steps))
			_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name}, Storage: tc.storage, MaxBytes: tc.maxBytes})
			steps = append(steps, tc.name+": "+jsErrOutcome(err))
		}
		_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "S3", Subjects: []string{"S3"}, MaxBytes: 8192})
		steps = append(steps, "update over the bound: "+jsErrOutcome(err))
		_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "S3", Subjects: []string{"S3"}})
		steps = append(steps, "update without max_bytes: "+jsErrOutcome(err))
		t.Log(lines(steps...))
		return steps
	})
}
