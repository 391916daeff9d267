package tests

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
	"github.com/nats-io/nats.go"
)

// Bus's own API ($BUS.>) and the system subjects ($SYS.>) stay on their
// side of a leaf link, both ways: a hub's client can neither call bus's
// API nor ask bus who it is, and neither side's subscriptions there are
// told to, or fed by, the other (security issue #22).

func TestLeafKeepsBusAndSysSubjectsOnTheirSide(t *testing.T) {
	hub := startHubCluster(t, 1, false, nil)
	leaf := startBusLeaf(t, hub, server.Options{JetStream: true, StoreDir: t.TempDir()}, server.LeafRemote{URLs: hub.leafURLs()})
	onHub := connect(t, hub.clientURL(0))
	onLeaf := connect(t, busURL(leaf))

	// Bus's API and a bus client's subscriptions on $BUS and $SYS are not
	// told to the hub: the echo service, subscribed behind them, is, so
	// once the hub reaches it the others would have been told too.
	busSub, err := onLeaf.SubscribeSync("$BUS.>")
	must(t, err)
	sysSub, err := onLeaf.SubscribeSync("$SYS.>")
	must(t, err)
	echo, err := onLeaf.Subscribe("echo", func(m *nats.Msg) { _ = m.Respond(m.Data) })
	must(t, err)
	defer echo.Unsubscribe()
	flushAll(t, onLeaf)
	eventually(t, 10*time.Second, func() bool {
		_, err := onHub.Request("echo", nil, time.Second)
		return err == nil
	})
	t.Run("bus API and subscriptions are not announced", func(t *testing.T) {
		for _, subject := range []string{"$BUS.API.DLQ.REDRIVE.DLQ", "$BUS.INFO", "$BUS.x", "$SYS.x"} {
			_, err := onHub.Request(subject, []byte(`{}`), 5*time.Second)
			if !errors.Is(err, nats.ErrNoResponders) {
				t.Errorf("hub client's request on %s: %v, want no responders", subject, err)
			}
		}
	})

	// From here a bus client listens everywhere: the hub learns of
	// "everything", so only the link's deny list keeps $BUS and $SYS out.
	all, err := onLeaf.SubscribeSync(">")
	must(t, err)
	flushAll(t, onLeaf)
	awaitRoute(t, onHub, all, "probe.all")

	t.Run("bus answers no request on $BUS or $SYS", func(t *testing.T) {
		// The hub answers $SYS.REQ.USER.INFO itself; bus must answer none. The
		// echo request after it crosses the link behind it, so once its
		// answer is in, any answer of bus's would be too.
		inbox := nats.NewInbox()
		answers, err := onHub.SubscribeSync(inbox)
		must(t, err)
		for _, subject := range []string{"$SYS.REQ.USER.INFO", "$BUS.API.DLQ.REDRIVE.DLQ", "$BUS.INFO"} {
			must(t, onHub.PublishRequest(subject, inbox, []byte(`{}`)))
		}
		if _, err := onHub.Request("echo", []byte("after"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		hubID := hub.nodes[0].ID()
		for {
			m, err := answers.NextMsg(100 * time.Millisecond)
			if err != nil {
				break
			}
			var env struct {
				Server struct {
					ID string `json:"id"`
				} `json:"server"`
			}
			_ = json.Unmarshal(m.Data, &env)
			if env.Server.ID != hubID {
				t.Fatalf("bus answered the hub's request: %s", m.Data)
			}
		}
	})

	t.Run("hub messages on $BUS and $SYS do not reach bus", func(t *testing.T) {
		for _, subject := range []string{"$BUS.x", "$BUS.API.DLQ.REDRIVE.DLQ", "$SYS.x", "$SYS.REQ.USER.INFO"} {
			must(t, onHub.Publish(subject, []byte("from hub")))
		}
		// Nor do those asking for an answer there: bus would publish it
		// (a stream's pub ack on $BUS.DLQ.REDRIVEACK.… fakes a redrive's).
		for _, reply := range []string{"$BUS.DLQ.REDRIVEACK.DLQ.1.1", "$SYS.x"} {
			must(t, onHub.PublishRequest("asks.for.reserved.reply", reply, nil))
		}
		must(t, onHub.Publish("marker", nil))
		// The marker came behind them on the link and on the leaf
		// client's connection.
		for {
			m, err := all.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("no marker: %v", err)
			}
			if m.Subject == "marker" {
				break
			}
			if strings.HasPrefix(m.Subject, "$BUS.") || strings.HasPrefix(m.Subject, "$SYS.") || m.Subject == "asks.for.reserved.reply" {
				t.Fatalf("bus's > subscriber got %s (reply %q) from the hub", m.Subject, m.Reply)
			}
		}
		for _, sub := range []*nats.Subscription{busSub, sysSub} {
			if n, _, _ := sub.Pending(); n != 0 {
				m, _ := sub.NextMsg(0)
				t.Fatalf("%s got %d from the hub, first %v", sub.Subject, n, m.Subject)
			}
		}
	})

	t.Run("bus messages on $BUS and $SYS do not reach the hub", func(t *testing.T) {
		hubAll, err := onHub.SubscribeSync(">")
		must(t, err)
		awaitRoute(t, onLeaf, hubAll, "probe.hub")
		for _, subject := range []string{"$BUS.x", "$SYS.x"} {
			must(t, onLeaf.Publish(subject, []byte("from leaf")))
		}
		must(t, onLeaf.Publish("marker.hub", nil))
		for {
			m, err := hubAll.NextMsg(5 * time.Second)
			if err != nil {
				t.Fatalf("no marker: %v", err)
			}
			if m.Subject == "marker.hub" {
				break
			}
			if m.Subject == "$BUS.x" || m.Subject == "$SYS.x" {
				t.Fatalf("the hub got %s from bus", m.Subject)
			}
		}
	})
}
