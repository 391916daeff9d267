package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// TestJWTResolverPushAppliesMappingsAndExportsLive pushes a new JWT of
// account A to a full resolver, on bus and the reference alike, with
// A's and B's users connected and subscribed: A's new mapping routes the
// next publish, and the stream export A drops stops B's import of it at
// once, while the one A keeps still delivers.
func TestJWTResolverPushAppliesMappingsAndExportsLive(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports = jwt.Exports{
			&jwt.Export{Subject: "news.>", Type: jwt.Stream},
			&jwt.Export{Subject: "alerts.>", Type: jwt.Stream},
		}
		ac.Mappings = jwt.Mapping{"in.a": []jwt.WeightedMapping{{Subject: "out.a", Weight: 100}}}
	})
	w.addAccount("B", func(ac *jwt.AccountClaims) {
		ac.Imports = jwt.Imports{
			&jwt.Import{Account: w.accounts["A"].pub, Subject: "news.>", Type: jwt.Stream},
			&jwt.Import{Account: w.accounts["A"].pub, Subject: "alerts.>", Type: jwt.Stream},
		}
	})
	pushes := []string{w.accounts["A"].jwt, w.accounts["B"].jwt}
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Exports = jwt.Exports{&jwt.Export{Subject: "news.>", Type: jwt.Stream}}
		ac.Mappings = jwt.Mapping{"in.a": []jwt.WeightedMapping{{Subject: "out.b", Weight: 100}}, "new.a": []jwt.WeightedMapping{{Subject: "new.b", Weight: 100}}}
	})
	changed := w.accounts["A"].jwt
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	credsB, _ := w.user("B", nil, nil)
	bus := startBus(t, w.resolverOptions(t.TempDir(), "SYS"))
	ref, _ := startReferenceFile(t, w.resolverConfig(t.TempDir(), "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		var steps []string
		for _, jwt := range pushes {
			steps = append(steps, "push: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(jwt)))
		}
		a := connect(t, url, nats.UserCredentials(credsA))
		b := connect(t, url, nats.UserCredentials(credsB))
		subA, _ := a.SubscribeSync(">")
		subB, _ := b.SubscribeSync(">")
		a.Flush()
		b.Flush()
		publishAll := func(stage string) {
			for _, subject := range []string{"in.a", "new.a", "news.x", "alerts.y"} {
				a.Publish(subject, []byte(stage))
			}
			a.Flush()
			steps = append(steps, stage+" A receives: "+strings.Join(received(t, subA, 300*time.Millisecond), ", "),
				stage+" B receives: "+strings.Join(received(t, subB, 300*time.Millisecond), ", "))
		}
		publishAll("before")
		steps = append(steps, "push A changed: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(changed)))
		publishAll("after")
		steps = append(steps, fmt.Sprintf("connected: A %v, B %v", a.IsConnected(), b.IsConnected()))
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTTieredR1Limits checks, on bus and the reference alike, that an
// account JWT with only tiered JetStream limits is bounded by its R1
// tier: the one server's streams are single-replica.
func TestJWTTieredR1Limits(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamTieredLimits = jwt.JetStreamTieredLimits{
			"R1": {MemoryStorage: -1, DiskStorage: -1, Streams: 1, Consumer: 1},
		}
	})
	credsA, _ := w.user("A", nil, nil)
	opts := w.busOptions()
	opts.Host, opts.StoreDir, opts.JetStream = "127.0.0.1", t.TempDir(), true
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, w.referenceConfig("jetstream: enabled"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		nc := connect(t, url, nats.UserCredentials(credsA))
		js, _ := nc.JetStream()
		var steps []string
		for _, name := range []string{"S1", "S2"} {
			_, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: nats.MemoryStorage})
			steps = append(steps, name+": "+fmt.Sprint(err))
		}
		for _, name := range []string{"C1", "C2"} {
			_, err := js.AddConsumer("S1", &nats.ConsumerConfig{Durable: name, AckPolicy: nats.AckExplicitPolicy})
			steps = append(steps, name+": "+fmt.Sprint(err))
		}
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}

// TestJWTResolverPushTurnsJetStreamOnAndOff pushes an existing account's
// JWT with JetStream limits, then without, on bus and the reference
// alike: its JetStream comes at once, and goes again.
func TestJWTResolverPushTurnsJetStreamOnAndOff(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	without := w.addAccount("A", nil).jwt
	with := w.addAccount("A", func(ac *jwt.AccountClaims) {
		ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	}).jwt
	sysCreds, _ := w.user("SYS", nil, nil)
	credsA, _ := w.user("A", nil, nil)
	opts := w.resolverOptions(t.TempDir(), "SYS")
	opts.JetStream, opts.StoreDir = true, t.TempDir()
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, "jetstream: enabled\n"+w.resolverConfig(t.TempDir(), "SYS"))
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		sys := connect(t, url, nats.UserCredentials(sysCreds))
		steps := []string{"push A without JetStream: " + claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(without))}
		nc := connect(t, url, nats.UserCredentials(credsA), nats.NoReconnect())
		js, _ := nc.JetStream(nats.MaxWait(2 * time.Second))
		create := func(name string) string {
			_, err := js.AddStream(&nats.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: nats.MemoryStorage})
			return name + ": " + fmt.Sprint(err)
		}
		steps = append(steps, create("S1"))
		steps = append(steps, "push A with JetStream: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(with)))
		steps = append(steps, create("S2"))
		steps = append(steps, "push A without JetStream again: "+claimsAnswer(t, sys, "$SYS.REQ.CLAIMS.UPDATE", []byte(without)))
		steps = append(steps, create("S3"), fmt.Sprintf("A's user connected: %v", nc.IsConnected()))
		t.Log(strings.Join(steps, "\n"))
		return steps
	})
}
