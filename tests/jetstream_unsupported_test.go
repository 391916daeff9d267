package tests

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestUnsupportedFeaturesAreRefused: a reference feature bus does not
// have is refused with an error naming it, never accepted and ignored.
func TestUnsupportedFeaturesAreRefused(t *testing.T) {
	t.Parallel()
	s, _ := startJS(t)
	nc := connect(t, busURL(s))
	for _, c := range []struct{ subject, body, want string }{
		{"$JS.API.STREAM.CREATE.A", `{"name":"A","mirror":{"name":"B","external":{"api":"$JS.x.API"}}}`, "external"},
	} {
		if strings.Contains(c.subject, "CONSUMER") {
			if _, err := nc.Request("$JS.API.STREAM.CREATE.X", []byte(`{"name":"X","subjects":["x.>"]}`), 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := nc.Request(c.subject, []byte(c.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Error *struct {
				Description string `json:"description"`
			} `json:"error"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil || r.Error == nil || !strings.Contains(r.Error.Description, c.want) {
			t.Errorf("%s %s: answer %s, want an error naming %s", c.subject, c.body, resp.Data, c.want)
		}
	}
	// A stream may allow atomic and fast batches; a batch is refused.
	if _, err := nc.Request("$JS.API.STREAM.CREATE.B", []byte(`{"name":"B","subjects":["b"],"allow_atomic":true,"allow_batched":true}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"Nats-Batch-Id", "Nats-Incr", "Nats-Schedule"} {
		m := nats.NewMsg("b")
		m.Header.Set(h, "1")
		resp, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil || !strings.Contains(string(resp.Data), `"error"`) {
			t.Fatalf("publish with %s: %v %v", h, resp, err)
		}
	}
	// first_seq is supported: the first message gets it.
	if _, err := nc.Request("$JS.API.STREAM.CREATE.F", []byte(`{"name":"F","subjects":["f"],"first_seq":1000}`), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	ack, err := nc.Request("f", []byte("x"), 5*time.Second)
	if err != nil || !strings.Contains(string(ack.Data), `"seq":1000`) {
		t.Fatalf("first publish with first_seq 1000: %s %v", ack.Data, err)
	}
}

// TestDeletedDetailsMatchReference: stream info with deleted_details
// lists the deleted seqs as the reference does.
func TestDeletedDetailsMatchReference(t *testing.T) {
	t.Parallel()
	run := func(url string) string {
		nc := connect(t, url)
		if _, err := nc.Request("$JS.API.STREAM.CREATE.D", []byte(`{"name":"D","subjects":["d"]}`), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		for range 8 {
			if _, err := nc.Request("d", []byte("x"), 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		for _, seq := range []string{"2", "3", "7"} {
			if _, err := nc.Request("$JS.API.STREAM.MSG.DELETE.D", []byte(`{"seq":`+seq+`}`), 5*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := nc.Request("$JS.API.STREAM.INFO.D", []byte(`{"deleted_details":true}`), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			State struct {
				Deleted    []uint64 `json:"deleted"`
				NumDeleted int      `json:"num_deleted"`
			} `json:"state"`
		}
		if err := json.Unmarshal(resp.Data, &r); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(r.State.Deleted, r.State.NumDeleted)
	}
	ref := run("nats://" + refAddr(startReference(t, true)))
	got := run(busURL(startBus(t, server.Options{JetStream: true})))
	if ref != got {
		t.Fatalf("deleted details: bus %s, reference %s", got, ref)
	}
}
