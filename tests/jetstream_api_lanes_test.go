package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// A slow change (a stream with 80,000 subjects to check and subscribe)
// must not hold up reads: an account info sent just after it is
// answered first, and the create still succeeds.
func TestAPIReadsDoNotWaitForChanges(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true})
	nc := connect(t, busURL(s))
	subjects := make([]string, 80_000)
	for i := range subjects {
		subjects[i] = fmt.Sprintf(`"b.%d"`, i)
	}
	body := `{"name":"BIG","subjects":[` + strings.Join(subjects, ",") + `]}`
	// One subscription for both answers, so they are seen in the order
	// they arrived.
	answers := make(chan string, 2)
	prefix := nats.NewInbox()
	if _, err := nc.Subscribe(prefix+".*", func(m *nats.Msg) {
		name := strings.TrimPrefix(m.Subject, prefix+".")
		if name == "create" && strings.Contains(string(m.Data), `"error"`) {
			name = "create failed: " + string(m.Data[:min(200, len(m.Data))])
		}
		answers <- name
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.STREAM.CREATE.BIG", prefix+".create", []byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.API.INFO", prefix+".info", nil); err != nil {
		t.Fatal(err)
	}
	var order []string
	for len(order) < 2 {
		select {
		case a := <-answers:
			order = append(order, a)
		case <-time.After(30 * time.Second):
			t.Fatalf("answers so far: %v", order)
		}
	}
	if order[0] != "info" || order[1] != "create" {
		t.Fatalf("answered in order %v, want info before create", order)
	}
}
