package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// natsCLIAckFlowControl adds a consumer with ack policy flow_control
// with the nats CLI and describes what the server made of it.
func natsCLIAckFlowControl(t *testing.T, url string) []string {
	bin := natsCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	run := func(args ...string) string {
		o, err := runCLI(t, ctx, bin, url, args...)
		if err != nil {
			t.Fatalf("nats %v: %v\n%s", args, err, o)
		}
		return o
	}
	run("stream", "add", "WQ", "--subjects", "wq.>", "--retention", "work", "--defaults")
	run("consumer", "add", "WQ", "F", "--ack", "flow_control", "--target", "d.f", "--max-pending", "10", "--defaults")
	var info struct {
		Config struct {
			AckPolicy     string `json:"ack_policy"`
			FlowControl   bool   `json:"flow_control"`
			Heartbeat     int64  `json:"idle_heartbeat"`
			MaxAckPending int    `json:"max_ack_pending"`
			AckWait       int64  `json:"ack_wait"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(run("consumer", "info", "WQ", "F", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("consumer: %+v", info.Config))
	o, err := runCLI(t, ctx, bin, url, "consumer", "add", "WQ", "P", "--ack", "flow_control", "--pull", "--defaults")
	out = append(out, fmt.Sprintf("pull: failed %v, says 10218 %v", err != nil, strings.Contains(o, "flow control ack policy requires a push based consumer")))
	return out
}

func TestNatsCLIAckFlowControlMatchesReference(t *testing.T) {
	t.Parallel()
	ref := natsCLIAckFlowControl(t, "nats://"+refAddr(startReference(t, true)))
	got := natsCLIAckFlowControl(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
