package server

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// accountsFixture is a server with n accounts (one user each, "u0"…),
// and in each a publisher and a subscriber of subject.
type accountsFixture struct {
	routeFixture
	pubs []*conn
}

func newAccountsFixture(tb testing.TB, n int, subject string) *accountsFixture {
	tb.Helper()
	var accounts []Account
	for i := range n {
		accounts = append(accounts, Account{Name: fmt.Sprint("ACC", i), Users: []User{{Name: fmt.Sprint("u", i), Password: "p"}}})
	}
	srv, err := New(Options{Accounts: accounts})
	if err != nil {
		tb.Fatal(err)
	}
	f := &accountsFixture{routeFixture: routeFixture{srv: srv}}
	join := func(c *conn, user string) {
		if err := c.becomeUser(srv.auth().users[user].id); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		user := fmt.Sprint("u", i)
		pub, sub := pipeConn(tb, srv, uint64(2*i+1)), pipeConn(tb, srv, uint64(2*i+2))
		join(pub, user)
		join(sub, user)
		if err := sub.processSub(&op{kind: opSub, subject: []byte(subject), sid: []byte("1")}); err != nil {
			tb.Fatal(err)
		}
		f.pubs, f.subs = append(f.pubs, pub), append(f.subs, sub)
	}
	return f
}

// A publish reaches the subscribers of its own account only, and
// allocates nothing with a hundred accounts, as with one.
func TestAccountPublishStaysInAccount(t *testing.T) {
	f := newAccountsFixture(t, 100, "orders.eu")
	subject, payload := []byte("orders.eu"), []byte("hello")
	for i, pub := range f.pubs {
		if n := pub.publish(subject, nil, -1, payload); n != 1 {
			t.Fatalf("account %d: delivered to %d subscriptions, want its own 1", i, n)
		}
		pub.wakeWriters()
		for j, sub := range f.subs {
			msgs, _ := sub.out.counts()
			want := int64(0)
			if j <= i {
				want = 1
			}
			if msgs != want {
				t.Fatalf("after account %d published, account %d's subscriber has %d messages, want %d", i, j, msgs, want)
			}
		}
	}
	if raceEnabled {
		return // sync.Pool drops items at random under the race detector
	}
	run := func() {
		for _, pub := range f.pubs {
			pub.publish(subject, nil, -1, payload)
			pub.wakeWriters()
		}
		f.drainOutbound()
	}
	run()
	if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
		t.Fatalf("publishing in 100 accounts allocates %.1f times per round, want 0", allocs)
	}
}

// The account's limits: the connection limit refuses with the
// reference's error and frees its slot on close, and each connection's
// subscriptions and payload take the lower of the account's and the
// server's limit.
func TestAccountLimitsApply(t *testing.T) {
	srv, err := New(Options{MaxPayload: 1000, MaxSubscriptions: 5, Accounts: []Account{{
		Name: "A", Users: []User{{Name: "a", Password: "p"}},
		Limits: AccountLimits{MaxConnections: 1, MaxSubscriptions: 10, MaxPayload: 100},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	id := srv.auth().users["a"].id
	first, second := pipeConn(t, srv, 1), pipeConn(t, srv, 2)
	if err := first.becomeUser(id); err != nil {
		t.Fatal(err)
	}
	if err := second.becomeUser(id); err != errAccountConnections {
		t.Fatalf("second connection: %v, want %v", err, errAccountConnections)
	}
	if first.parser.maxPayload != 100 {
		t.Errorf("max payload %d, want the account's 100", first.parser.maxPayload)
	}
	for i := range 6 {
		if err := first.processSub(&op{kind: opSub, subject: []byte("s"), sid: fmt.Appendf(nil, "%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(first.subs); n != 5 {
		t.Errorf("%d subscriptions, want the server's 5 (lower than the account's 10)", n)
	}
	first.close("test", false)
	if err := second.becomeUser(id); err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
}

// Accounts are refused with the reference's words: a reserved or
// repeated name, a user in two accounts, limits out of range.
func TestAccountsValidate(t *testing.T) {
	users := func(names ...string) []User {
		var out []User
		for _, n := range names {
			out = append(out, User{Name: n, Password: "p"})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"reserved", Options{Accounts: []Account{{Name: "$G"}}}, `"$G" is a Reserved Account`},
		{"duplicate", Options{Accounts: []Account{{Name: "A"}, {Name: "A"}}}, "Duplicate Account Entry: A"},
		{"system name", Options{SystemAccount: SystemAccount{Name: "S", Users: users("s")}, Accounts: []Account{{Name: "S"}}}, "Duplicate Account Entry: S"},
		{"user twice", Options{Accounts: []Account{{Name: "A", Users: users("x")}, {Name: "B", Users: users("x")}}}, `Duplicate user "x" detected`},
		{"user in authorization", Options{Authorization: Authorization{Users: users("x")}, Accounts: []Account{{Name: "A", Users: users("x")}}}, `Duplicate user "x" detected`},
		{"single user", Options{Authorization: Authorization{User: "u", Password: "p"}, Accounts: []Account{{Name: "A", Users: users("x")}}}, "Can not have a single user/pass and accounts"},
		{"token", Options{Authorization: Authorization{Token: "t"}, Accounts: []Account{{Name: "A", Users: users("x")}}}, "Can not have a token and accounts"},
		{"negative limit", Options{Accounts: []Account{{Name: "A", Limits: AccountLimits{MaxPayload: -1}}}}, "max_payload -1 out of range"},
		{"no_auth_user", Options{Authorization: Authorization{NoAuthUser: "nobody"}, Accounts: []Account{{Name: "A", Users: users("x")}}}, `no_auth_user "nobody" is not one of the users`},
		{"bad mapping", Options{Accounts: []Account{{Name: "A", Mappings: []Mapping{{Source: "a.>", Destinations: []MapDestination{{Subject: "$9", Weight: 100}}}}}}}, `account "A"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

// BenchmarkAccountsPublish is pub→sub with 1 and with 100 accounts, each
// with its own publisher and subscriber: the publishers take turns, so
// each publish matches in another account's trie.
//
// The outbound buffers are drained every 64 publishes (batch=64), so
// with 100 accounts each subscriber gets one message per drain and pays
// a buffer chunk and a write for it alone, where one account's
// subscriber batches 64: that, not the account lookup, is most of the
// difference between the two (the profiles' trie Match costs are alike).
// batch=perSubscriber drains every 64 messages per subscriber, which
// compares the accounts' cost at equal batching.
func BenchmarkAccountsPublish(b *testing.B) {
	for _, bench := range []struct {
		n           int
		perSubBatch bool
	}{{1, false}, {100, false}, {100, true}} {
		n := bench.n
		every := 64
		name := fmt.Sprintf("accounts=%d", n)
		if bench.perSubBatch {
			every, name = 64*n, name+"/batch=perSubscriber"
		}
		b.Run(name, func(b *testing.B) {
			f := newAccountsFixture(b, n, "bench.subject")
			subject, payload := []byte("bench.subject"), make([]byte, 16)
			b.ReportAllocs()
			b.SetBytes(16)
			i := 0
			for b.Loop() {
				pub := f.pubs[i%n]
				pub.publish(subject, nil, -1, payload)
				pub.wakeWriters()
				if i++; i%every == 0 {
					f.drainOutbound()
				}
			}
		})
	}
}

// BenchmarkImportHop is pub→sub across a stream import: A's publisher,
// B's subscriber of the import's prefixed subject.
func BenchmarkImportHop(b *testing.B) {
	for _, prefix := range []string{"", "from_a"} {
		b.Run("prefix="+prefix, func(b *testing.B) {
			srv, err := New(Options{Accounts: []Account{
				{Name: "A", Users: []User{{Name: "a", Password: "p"}}, Exports: Exports{Streams: []StreamExport{{Subject: "bench.>"}}}},
				{Name: "B", Users: []User{{Name: "b", Password: "p"}}, Imports: Imports{Streams: []StreamImport{{Account: "A", Subject: "bench.>", Prefix: prefix}}}},
			}})
			if err != nil {
				b.Fatal(err)
			}
			pub, sub := pipeConn(b, srv, 1), pipeConn(b, srv, 2)
			for c, user := range map[*conn]string{pub: "a", sub: "b"} {
				if err := c.becomeUser(srv.auth().users[user].id); err != nil {
					b.Fatal(err)
				}
			}
			if err := sub.processSub(&op{kind: opSub, subject: []byte(">"), sid: []byte("1")}); err != nil {
				b.Fatal(err)
			}
			f := &routeFixture{srv: srv, subs: []*conn{sub}}
			subject, payload := []byte("bench.subject"), make([]byte, 16)
			b.ReportAllocs()
			b.SetBytes(16)
			i := 0
			for b.Loop() {
				if pub.publish(subject, nil, -1, payload) != 1 {
					b.Fatal("not delivered across the import")
				}
				if i++; i%64 == 0 {
					f.drainOutbound()
				}
			}
		})
	}
}

// BenchmarkIdleAccountMemory reports the heap an account with one user
// and no connection costs.
func BenchmarkIdleAccountMemory(b *testing.B) {
	const n = 1000
	accounts := make([]Account, n)
	for i := range accounts {
		accounts[i] = Account{Name: fmt.Sprint("ACC", i), Users: []User{{Name: fmt.Sprint("u", i), Password: "p"}}}
	}
	var before, after runtime.MemStats
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		srv, err := New(Options{Accounts: accounts})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/account")
		runtime.KeepAlive(srv)
	}
}
