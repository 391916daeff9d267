package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestAccountsIsolationProperty builds random worlds of accounts, users
// (some in the global account) and subscriptions, publishes random
// subjects as random users, and checks that every subscription got
// exactly what the oracle says: the messages published in its own
// account on a subject its pattern matches. BUS_PROP_SEED picks the
// worlds as for TestSecurityProperty.
func TestAccountsIsolationProperty(t *testing.T) {
	t.Parallel()
	base := propBaseSeed(t, 2000)
	t.Logf("base seed %d", base)
	for i := range 6 {
		seed := base + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runAccountsWorld(t, seed)
		})
	}
}

// accountsWorldUser is one user of a random world: its account ("" for
// the global one) and its subscriptions' patterns.
type accountsWorldUser struct {
	name, account string
	patterns      []string
}

var (
	worldTokens   = []string{"a", "b", "c"}
	worldPatterns = []string{"a.x", "a.*", "*.x", "b.>", ">", "c.y", "*.*"}
)

func runAccountsWorld(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0xacc))
	var opts server.Options
	var users []accountsWorldUser
	nAccounts := 1 + r.IntN(4)
	for i := range nAccounts {
		acc := server.Account{Name: fmt.Sprintf("ACC%d", i)}
		for j := range 1 + r.IntN(3) {
			name := fmt.Sprintf("u%d_%d", i, j)
			acc.Users = append(acc.Users, server.User{Name: name, Password: accountsPass})
			users = append(users, accountsWorldUser{name: name, account: acc.Name})
		}
		opts.Accounts = append(opts.Accounts, acc)
	}
	for j := range 1 + r.IntN(2) {
		name := fmt.Sprintf("g%d", j)
		opts.Authorization.Users = append(opts.Authorization.Users, server.User{Name: name, Password: accountsPass})
		users = append(users, accountsWorldUser{name: name})
	}
	s := startBus(t, opts)
	url := busURL(s)

	conns := make([]*nats.Conn, len(users))
	subs := map[string]*nats.Subscription{} // by user and pattern
	for i := range users {
		u := &users[i]
		conns[i] = connectAs(t, url, u.name)
		for _, p := range worldPatterns {
			if r.IntN(3) == 0 {
				sub, err := conns[i].SubscribeSync(p)
				if err != nil {
					t.Fatal(err)
				}
				u.patterns = append(u.patterns, p)
				subs[u.name+" "+p] = sub
			}
		}
		if err := conns[i].Flush(); err != nil {
			t.Fatal(err)
		}
	}

	want := map[string][]string{}
	for n := range 30 {
		i := r.IntN(len(users))
		subject := worldTokens[r.IntN(len(worldTokens))] + "." + []string{"x", "y"}[r.IntN(2)]
		body := fmt.Sprintf("%d from %s", n, users[i].name)
		if err := conns[i].Publish(subject, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := conns[i].Flush(); err != nil {
			t.Fatal(err)
		}
		for _, u := range users {
			if u.account != users[i].account {
				continue
			}
			for _, p := range u.patterns {
				if worldMatches(p, subject) {
					want[u.name+" "+p] = append(want[u.name+" "+p], subject+" "+body)
				}
			}
		}
	}
	// Every publish was flushed, so what a subscription gets is on its
	// way: read what is expected, then look for one more.
	for key, sub := range subs {
		var got []string
		for range len(want[key]) + 1 {
			wait := 2 * time.Second
			if len(got) == len(want[key]) {
				wait = 50 * time.Millisecond
			}
			m, err := sub.NextMsg(wait)
			if err != nil {
				break
			}
			got = append(got, m.Subject+" "+string(m.Data))
		}
		slices.Sort(got)
		exp := want[key]
		slices.Sort(exp)
		if strings.Join(got, "\n") != strings.Join(exp, "\n") {
			t.Errorf("seed %d: %s got\n%s\nwant\n%s", seed, key, strings.Join(got, "\n"), strings.Join(exp, "\n"))
		}
	}
}

// worldMatches is the oracle's subject match, written apart from bus's.
func worldMatches(pattern, subject string) bool {
	p, s := strings.Split(pattern, "."), strings.Split(subject, ".")
	for i, tok := range p {
		switch {
		case tok == ">":
			return i < len(s)
		case i >= len(s):
			return false
		case tok != "*" && tok != s[i]:
			return false
		}
	}
	return len(p) == len(s)
}
