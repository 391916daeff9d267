package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// The nats CLI with -s ws://… works against bus as over TCP: a user's
// credentials, a subscription that sees a publish, a request answered
// by `nats reply`, and a stream made, fed and read.
func TestNatsCLIOverWebSocket(t *testing.T) {
	bin := natsCLI(t)
	s, wsURL := startWSBus(t, server.Options{JetStream: true, Authorization: wsUsers()})
	url := strings.Replace(wsURL, "ws://", "ws://alice:pa@", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli := func(args ...string) string {
		t.Helper()
		out, err := runCLI(t, ctx, bin, url, args...)
		if err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	subOut := make(chan string, 1)
	go func() {
		out, _ := runCLI(t, ctx, bin, url, "sub", "web.>", "--count", "1")
		subOut <- out
	}()
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions == 1 })
	cli("pub", "web.hello", "over a websocket")
	select {
	case out := <-subOut:
		if !strings.Contains(out, "over a websocket") {
			t.Fatalf("sub over ws:// saw:\n%s", out)
		}
	case <-ctx.Done():
		t.Fatal("sub over ws:// got nothing")
	}

	replyCtx, stopReply := context.WithCancel(ctx)
	defer stopReply()
	go func() { _, _ = runCLI(t, replyCtx, bin, url, "reply", "svc.time", "noon") }()
	// Until the replier has subscribed, a request finds no responders.
	eventually(t, 10*time.Second, func() bool {
		out, err := runCLI(t, ctx, bin, url, "request", "svc.time", "now?")
		return err == nil && strings.Contains(out, "noon")
	})
	stopReply()

	cli("stream", "add", "WEB", "--subjects", "web.>", "--defaults")
	cli("pub", "web.click", "button-1", "--jetstream")
	if out := cli("stream", "get", "WEB", "1"); !strings.Contains(out, "button-1") {
		t.Fatalf("stream get over ws://:\n%s", out)
	}
}
