package tests

import (
	"fmt"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// BenchmarkAccountsPubSub publishes through one account's subject space to
// one subscriber (and fanned out to ten) when the server holds 1 or 100
// accounts, for bus and the
// embedded reference side by side (issue 27: the hot path must not pay for
// tenants it does not serve):
//
//	go test ./tests -run '^$' -bench AccountsPubSub -benchtime 200000x
func BenchmarkAccountsPubSub(b *testing.B) {
	for _, accounts := range []int{1, 100} {
		busOpts := server.Options{Host: "127.0.0.1", StoreDir: b.TempDir()}
		refAccounts := make([]*natsserver.Account, accounts)
		var refUsers []*natsserver.User
		for i := 0; i < accounts; i++ {
			name := fmt.Sprintf("A%d", i)
			user := fmt.Sprintf("u%d", i)
			busOpts.Accounts = append(busOpts.Accounts, server.Account{Name: name,
				Users: []server.User{{Name: user, Password: accountsPass}}})
			refAccounts[i] = natsserver.NewAccount(name)
			refUsers = append(refUsers, &natsserver.User{Username: user, Password: accountsPass, Account: refAccounts[i]})
		}
		bus, err := server.New(busOpts)
		if err != nil || bus.Start() != nil {
			b.Fatal("start bus")
		}
		ref := startReferenceWith(b, func(o *natsserver.Options) { o.Accounts, o.Users = refAccounts, refUsers })
		for _, side := range []struct{ name, url string }{
			{"server=nats-server", ref.ClientURL()}, {"server=bus", busURL(bus)},
		} {
			for _, subs := range []int{1, 10} {
				b.Run(fmt.Sprintf("%s/accounts=%d/subs=%d", side.name, accounts, subs), func(b *testing.B) {
					auth := nats.UserInfo("u0", accountsPass)
					benchPubSubAcross(b, side.url, subs, auth, auth)
				})
			}
		}
		shutdown(b, bus)
	}
}

// benchPubSubAcross sends b.N 16-byte messages on bench from a connection
// logged in with pubAuth to subs connections logged in with subAuth, and
// waits until each has all of them.
func benchPubSubAcross(b *testing.B, url string, subs int, pubAuth, subAuth nats.Option) {
	pub, err := nats.Connect(url, pubAuth)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	done := make(chan struct{}, subs)
	counts := make([]int, subs)
	for i := range counts {
		sub, err := nats.Connect(url, subAuth)
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Close()
		s, _ := sub.Subscribe("bench", func(*nats.Msg) {
			if counts[i]++; counts[i] == b.N {
				done <- struct{}{}
			}
		})
		_ = s.SetPendingLimits(-1, -1)
		_ = sub.Flush()
	}
	payload := make([]byte, 16)
	b.SetBytes(16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = pub.Publish("bench", payload)
	}
	_ = pub.Flush()
	for range counts {
		select {
		case <-done:
		case <-time.After(time.Minute):
			b.Fatalf("received %v of %d", counts, b.N)
		}
	}
}
