package tests

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// The server-wide storage bound scenario: 1 MB of memory and of file
// storage for the server, shared by accounts A and B, which have
// JetStream without limits of their own.
const accountsServerLimitsReference = `
listen: 127.0.0.1:-1
jetstream { store_dir: %q, max_memory_store: 1MB, max_file_store: 1MB }
accounts {
  A { users: [ {user: a1, password: pw} ], jetstream: enabled }
  B { users: [ {user: b1, password: pw} ], jetstream: enabled }
}
`

func accountsServerLimitsBus(storeDir string) server.Options {
	user := func(name string) server.User { return server.User{Name: name, Password: accountsPass} }
	return server.Options{
		Host: "127.0.0.1", StoreDir: storeDir, JetStream: true,
		JetStreamMaxMemory: 1 << 20, JetStreamMaxStore: 1 << 20,
		Accounts: []server.Account{
			{Name: "A", Users: []server.User{user("a1")}, JetStream: &server.AccountJetStream{}},
			{Name: "B", Users: []server.User{user("b1")}, JetStream: &server.AccountJetStream{}},
		},
	}
}

// TestAccountsServerLimitsMatchReference checks, on bus and the
// reference, that max_memory_store and max_file_store bound the streams
// of every account together: a reservation (max_bytes) that fits in the
// account but not beside another account's is refused at create, and
// once the accounts' streams hold more than the bound a publish in any
// account is refused with the reference's error.
func TestAccountsServerLimitsMatchReference(t *testing.T) {
	t.Parallel()
	bus := startBus(t, accountsServerLimitsBus(t.TempDir()))
	ref := startReferenceConfig(t, accountsServerLimitsReference)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		ja, ctx := accountsJS(t, url, "a1")
		jb, _ := accountsJS(t, url, "b1")
		var steps []string
		for _, storage := range []jetstream.StorageType{jetstream.FileStorage, jetstream.MemoryStorage} {
			name := strings.ToUpper(storage.String())
			_, err := ja.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: storage, MaxBytes: 700 << 10})
			steps = append(steps, "A reserves 700K of "+name+": "+jsErrOutcome(err))
			_, err = jb.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: storage, MaxBytes: 700 << 10})
			steps = append(steps, "B reserves 700K of "+name+": "+jsErrOutcome(err))
			_, err = jb.CreateStream(ctx, jetstream.StreamConfig{Name: name + "U", Subjects: []string{name + "U.>"}, Storage: storage})
			steps = append(steps, "B creates an unbounded "+name+" stream: "+jsErrOutcome(err))
		}
		// A holds about 600K of file storage, B then goes past the bound.
		big := bytes.Repeat([]byte("x"), 100<<10)
		for range 6 {
			if _, err := ja.Publish(ctx, "FILE.a", big); err != nil {
				t.Fatal(err)
			}
		}
		for range 6 {
			_, _ = jb.Publish(ctx, "FILEU.b", big) // the last may be refused already
		}
		// bus sums the usage once a second: poll until a small publish
		// is refused.
		refused := func(js jetstream.JetStream, subject string) string {
			deadline := time.Now().Add(10 * time.Second)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for time.Now().Before(deadline) {
				if _, err := js.Publish(ctx, subject, []byte("y")); err != nil {
					return jsErrOutcome(err)
				}
				<-tick.C
			}
			return "never refused"
		}
		steps = append(steps, "B publishes past the server's bound: "+refused(jb, "FILEU.b"))
		steps = append(steps, "A publishes then: "+refused(ja, "FILE.a"))
		_, err := ja.Publish(ctx, "MEMORY.a", []byte("m"))
		steps = append(steps, "A publishes to memory: "+jsErrOutcome(err))
		return steps
	})
}

// TestAccountsServerLimitsRefuseOverReservation checks that accounts
// whose JetStream limits together exceed the server's bound are refused
// at start, as the reference refuses to start, with its words.
func TestAccountsServerLimitsRefuseOverReservation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(js *server.AccountJetStream)
		want string
	}{
		{"memory", func(js *server.AccountJetStream) { js.MaxMemory = 600 << 10 }, "insufficient memory resources available"},
		{"file", func(js *server.AccountJetStream) { js.MaxStore = 600 << 10 }, "insufficient storage resources available"},
	} {
		opts := accountsServerLimitsBus(t.TempDir())
		for i := range opts.Accounts {
			tc.set(opts.Accounts[i].JetStream)
		}
		_, err := server.New(opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
