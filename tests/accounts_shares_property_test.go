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

// TestAccountsSharesProperty builds random worlds of accounts with
// random stream and service exports (public or for some accounts) and
// the imports they allow (stream imports plain or under a prefix,
// service imports, chained), subscribes random users to random
// patterns, publishes random subjects, and checks that every
// subscription got exactly what a brute-force model says. The model
// knows nothing of bus: an import is allowed when every subject its
// pattern matches the export's matches too (checked over every subject
// of the model's alphabet), a publish reaches its own account's
// subscribers, each stream import of its subject delivers it once into
// the importer (under the prefix), and a service import forwards it
// into the exporter, where it goes on through that account's service
// imports. BUS_PROP_SEED picks the worlds as for TestSecurityProperty.
func TestAccountsSharesProperty(t *testing.T) {
	t.Parallel()
	base := propBaseSeed(t, 3000)
	t.Logf("base seed %d", base)
	for i := range 6 {
		seed := base + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runSharesWorld(t, seed)
		})
	}
}

var (
	// Stream subjects start with a or b, service subjects with s, so no
	// message crosses from one kind of import to the other.
	sharesStreamExports  = []string{"a.>", "a.x", "b.*", ">"}
	sharesStreamImports  = []string{"a.x", "a.>", "b.y", "b.*", "a.*"}
	sharesServiceExports = []string{"s.>", "s.x", "s.*"}
	sharesServiceImports = []string{"s.x", "s.y", "s.*", "s.>"}
	sharesPrefixes       = []string{"", "p0", "p1"}
	sharesPatterns       = []string{">", "a.*", "a.x", "b.>", "s.*", "s.x", "p0.>", "p1.a.*", "*.b.y", "p0.s.x"}
	sharesSubjects       = []string{"a.x", "a.y", "b.x", "b.y", "s.x", "s.y"}
)

// sharesWithin is the model's "every subject inner matches, outer
// matches too", by brute force over the subjects of 1 to 4 tokens of the
// alphabet the world uses.
func sharesWithin(inner, outer string) bool {
	alphabet := []string{"a", "b", "s", "x", "y", "p0", "p1"}
	var subjects []string
	var grow func(prefix []string)
	grow = func(prefix []string) {
		if len(prefix) > 0 {
			subjects = append(subjects, strings.Join(prefix, "."))
		}
		if len(prefix) == 4 {
			return
		}
		for _, tok := range alphabet {
			grow(append(slices.Clone(prefix), tok))
		}
	}
	grow(nil)
	for _, s := range subjects {
		if worldMatches(inner, s) && !worldMatches(outer, s) {
			return false
		}
	}
	return true
}

// sharesAllowed reports whether exports e of exporter let importer
// import subject.
func sharesAllowed(exports []sharesExport, subject, importer string) bool {
	for _, e := range exports {
		if sharesWithin(subject, e.subject) && (len(e.accounts) == 0 || slices.Contains(e.accounts, importer)) {
			return true
		}
	}
	return false
}

type sharesExport struct {
	subject  string
	accounts []string
}

func runSharesWorld(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x5ba2e5))
	n := 2 + r.IntN(3)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("ACC%d", i)
	}
	someAccounts := func(except int) []string {
		if r.IntN(2) == 0 {
			return nil // public
		}
		var list []string
		for j, name := range names {
			if j != except && r.IntN(2) == 0 {
				list = append(list, name)
			}
		}
		if len(list) == 0 {
			return nil
		}
		return list
	}
	streamExports := make([][]sharesExport, n)
	serviceExports := make([][]sharesExport, n)
	accounts := make([]server.Account, n)
	for i := range n {
		accounts[i].Name = names[i]
		for _, s := range sharesStreamExports {
			if r.IntN(3) == 0 {
				e := sharesExport{s, someAccounts(i)}
				streamExports[i] = append(streamExports[i], e)
				accounts[i].Exports.Streams = append(accounts[i].Exports.Streams, server.StreamExport{Subject: e.subject, Accounts: e.accounts})
			}
		}
		for _, s := range sharesServiceExports {
			if r.IntN(3) == 0 {
				e := sharesExport{s, someAccounts(i)}
				serviceExports[i] = append(serviceExports[i], e)
				accounts[i].Exports.Services = append(accounts[i].Exports.Services, server.ServiceExport{Subject: e.subject, Accounts: e.accounts})
			}
		}
	}
	// Imports only from accounts of a higher index, so that no chain
	// loops (bus and the reference refuse cycles); one stream import per
	// exporter and prefix, so that no two deliver one message into the
	// same subjects.
	type streamImport struct {
		exporter        int
		subject, prefix string
	}
	type serviceImport struct {
		exporter int
		subject  string
	}
	streamImports := make([][]streamImport, n)
	serviceImports := make([][]serviceImport, n)
	for i := range n {
		taken := map[string]bool{}
		for range 4 {
			x := i + 1 + r.IntN(max(n-i-1, 1))
			if x >= n {
				break
			}
			im := streamImport{x, sharesStreamImports[r.IntN(len(sharesStreamImports))], sharesPrefixes[r.IntN(len(sharesPrefixes))]}
			key := fmt.Sprint(x, im.prefix)
			if taken[key] || !sharesAllowed(streamExports[x], im.subject, names[i]) {
				continue
			}
			taken[key] = true
			streamImports[i] = append(streamImports[i], im)
			accounts[i].Imports.Streams = append(accounts[i].Imports.Streams, server.StreamImport{Account: names[x], Subject: im.subject, Prefix: im.prefix})
		}
		servicesTaken := map[int]bool{}
		for range 3 {
			x := i + 1 + r.IntN(max(n-i-1, 1))
			if x >= n || servicesTaken[x] {
				continue
			}
			im := serviceImport{x, sharesServiceImports[r.IntN(len(sharesServiceImports))]}
			if !sharesAllowed(serviceExports[x], im.subject, names[i]) {
				continue
			}
			servicesTaken[x] = true
			serviceImports[i] = append(serviceImports[i], im)
			accounts[i].Imports.Services = append(accounts[i].Imports.Services, server.ServiceImport{Account: names[x], Subject: im.subject})
		}
	}
	type user struct {
		name     string
		account  int
		patterns []string
	}
	var users []user
	for i := range n {
		for j := range 1 + r.IntN(2) {
			name := fmt.Sprintf("u%d_%d", i, j)
			accounts[i].Users = append(accounts[i].Users, server.User{Name: name, Password: accountsPass})
			users = append(users, user{name: name, account: i})
		}
	}
	s := startBus(t, server.Options{Accounts: accounts})
	url := busURL(s)
	conns := make([]*nats.Conn, len(users))
	subs := map[string]*nats.Subscription{}
	for i := range users {
		u := &users[i]
		conns[i] = connectAs(t, url, u.name)
		for _, p := range sharesPatterns {
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
	crossed := 0 // deliveries the model routes through an import
	deliverIn := func(account int, subject, body string) {
		for _, u := range users {
			if u.account != account {
				continue
			}
			for _, p := range u.patterns {
				if worldMatches(p, subject) {
					want[u.name+" "+p] = append(want[u.name+" "+p], subject+" "+body)
				}
			}
		}
	}
	// A service request goes on through the service imports of every
	// account it reaches; the imports form no loop.
	var serve func(account int, subject, body string)
	serve = func(account int, subject, body string) {
		deliverIn(account, subject, body)
		for _, im := range serviceImports[account] {
			if worldMatches(im.subject, subject) {
				crossed++
				serve(im.exporter, subject, body)
			}
		}
	}
	for k := range 40 {
		i := r.IntN(len(users))
		from := users[i].account
		subject := sharesSubjects[r.IntN(len(sharesSubjects))]
		body := fmt.Sprintf("%d from %s", k, users[i].name)
		if err := conns[i].Publish(subject, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := conns[i].Flush(); err != nil {
			t.Fatal(err)
		}
		serve(from, subject, body)
		for importer, ims := range streamImports {
			for _, im := range ims {
				if im.exporter == from && worldMatches(im.subject, subject) {
					to := subject
					if im.prefix != "" {
						to = im.prefix + "." + subject
					}
					crossed++
					deliverIn(importer, to, body)
				}
			}
		}
	}
	t.Logf("%d accounts, %d messages routed through an import", n, crossed)
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
		exp := slices.Clone(want[key])
		slices.Sort(exp)
		if strings.Join(got, "\n") != strings.Join(exp, "\n") {
			t.Errorf("seed %d: %s got\n%s\nwant\n%s\naccounts %+v", seed, key, strings.Join(got, "\n"), strings.Join(exp, "\n"), accounts)
		}
	}
}
