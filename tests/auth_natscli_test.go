package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// The nats CLI connects with --token, --user/--password, --nkey and
// --tlscert/--tlskey/--tlsca, and is refused without them, as the README's
// "Securing bus" shows.
func TestNatsCLISecured(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seed, pub := newNkeyUser(t)
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, "cli")
	cert, key := ca.serverCert(t)
	clientCert, clientKey := ca.issue(t, "cli-client", certSpec{cn: "cli", client: true})

	token := startBus(t, server.Options{Authorization: server.Authorization{Token: mustBcrypt(t, "s3cr3t")}})
	users := startBus(t, server.Options{Authorization: server.Authorization{Users: []server.User{
		{Name: "alice", Password: mustBcrypt(t, "pw")},
		{Nkey: pub},
	}}})
	secure := startBus(t, server.Options{TLS: server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, Verify: true}})

	for _, tc := range []struct {
		name   string
		url    string
		args   []string
		wantOK bool
		want   string // in the output
	}{
		{"token", busURL(token), []string{"--token", "s3cr3t", "pub", "x", "hi"}, true, "Published"},
		{"user as token", busURL(token), []string{"--user", "s3cr3t", "pub", "x", "hi"}, true, "Published"},
		{"no token", busURL(token), []string{"pub", "x", "hi"}, false, "Authorization Violation"},
		{"user and password", busURL(users), []string{"--user", "alice", "--password", "pw", "pub", "x", "hi"}, true, "Published"},
		{"wrong password", busURL(users), []string{"--user", "alice", "--password", "nope", "pub", "x", "hi"}, false, "Authorization Violation"},
		{"nkey", busURL(users), []string{"--nkey", seedFile, "pub", "x", "hi"}, true, "Published"},
		{"client certificate", "tls://" + secure.Addr().String(), []string{"--tlsca", ca.file, "--tlscert", clientCert, "--tlskey", clientKey, "pub", "x", "hi"}, true, "Published"},
		{"no client certificate", "tls://" + secure.Addr().String(), []string{"--tlsca", ca.file, "pub", "x", "hi"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, ctx, bin, tc.url, tc.args...)
			if (err == nil) != tc.wantOK || !strings.Contains(out, tc.want) {
				t.Errorf("nats %q: err %v, output:\n%s", tc.args, err, out)
			}
		})
	}
}
