package tests

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"

	"github.com/bus-dev/bus/server"
)

// connectWith is a quiet CONNECT carrying extra JSON fields.
func connectWith(fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return `CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true,"protocol":1` + fields + "}\r\n"
}

func mustBcrypt(t *testing.T, secret string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(secret), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// authScenario is one input sent to bus and the reference configured
// alike; what comes back (INFO aside) and whether the server hangs up
// must be identical.
type authScenario struct{ name, in string }

func runAuthScenarios(t *testing.T, auth server.Authorization, scenarios []authScenario) {
	t.Helper()
	pair := startAuthPair(t, auth)
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := normalizeFrames(exchange(t, pair.ref, sc.in))
			got := normalizeFrames(exchange(t, pair.bus, sc.in))
			if got != want {
				t.Errorf("bus differs from nats-server\ninput: %q\n  bus: %q\n  ref: %q", clip(sc.in), clip(got), clip(want))
			}
		})
	}
}

// Before authenticating, anything but CONNECT is refused the way the
// reference refuses it, and each kind of bad credentials gets its error
// and a closed connection.
func TestAuthTokenMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, token string }{
		{"plain", "s3cr3t"},
		{"bcrypt", mustBcrypt(t, "s3cr3t")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runAuthScenarios(t, server.Authorization{Token: tc.token}, []authScenario{
				{"right token", connectWith(`"auth_token":"s3cr3t"`) + "SUB a 1\r\nPUB a 1\r\nx\r\n"},
				{"wrong token", connectWith(`"auth_token":"nope"`)},
				{"no token", connectWith("")},
				{"user instead of token", connectWith(`"user":"s3cr3t","pass":"s3cr3t"`)},
				{"token is the hash", connectWith(`"auth_token":"` + tc.token + `"`)},
				{"ping first", ""},
				{"pub first", "PUB a 1\r\nx\r\n"},
				{"sub first", "SUB a 1\r\n"},
				{"garbage first", "XYZ\r\n"},
				{"lower case connect", strings.Replace(connectWith(`"auth_token":"s3cr3t"`), "CONNECT", "connect", 1)},
				{"bad json", "CONNECT {nope\r\n"},
				{"verbose connect", `CONNECT {"auth_token":"s3cr3t"}` + "\r\n"},
				{"second connect wrong", connectWith(`"auth_token":"s3cr3t"`) + connectWith(`"auth_token":"nope"`)},
				{"second connect right", connectWith(`"auth_token":"s3cr3t"`) + connectWith(`"auth_token":"s3cr3t"`)},
				{"auth before protocol check", connectWith(`"auth_token":"nope","protocol":5`)},
				{"protocol check after auth", `CONNECT {"verbose":false,"auth_token":"s3cr3t","protocol":5}` + "\r\n"},
			})
		})
	}
}

func TestAuthUserPasswordMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, pass string }{
		{"plain", "pa55"},
		{"bcrypt", mustBcrypt(t, "pa55")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runAuthScenarios(t, server.Authorization{User: "alice", Password: tc.pass}, []authScenario{
				{"right", connectWith(`"user":"alice","pass":"pa55"`) + "SUB a 1\r\nPUB a 1\r\nx\r\n"},
				{"wrong password", connectWith(`"user":"alice","pass":"nope"`)},
				{"wrong user", connectWith(`"user":"bob","pass":"pa55"`)},
				{"no password", connectWith(`"user":"alice"`)},
				{"token instead", connectWith(`"auth_token":"pa55"`)},
				{"nothing", connectWith("")},
			})
		})
	}
}

func TestAuthUsersMatchesReference(t *testing.T) {
	t.Parallel()
	auth := server.Authorization{Users: []server.User{
		{Name: "alice", Password: "a"},
		{Name: "bob", Password: mustBcrypt(t, "b")},
		{Name: "guest", Password: "g"},
	}}
	scenarios := []authScenario{
		{"alice", connectWith(`"user":"alice","pass":"a"`) + "SUB a 1\r\nPUB a 1\r\nx\r\n"},
		{"bob bcrypt", connectWith(`"user":"bob","pass":"b"`)},
		{"bob wrong", connectWith(`"user":"bob","pass":"a"`)},
		{"unknown user", connectWith(`"user":"carol","pass":"a"`)},
		{"no credentials", connectWith("")},
		{"nkey for unknown", connectWith(`"nkey":"UABC","sig":"x"`)},
		{"ping first", ""},
	}
	runAuthScenarios(t, auth, scenarios)
	t.Run("no_auth_user", func(t *testing.T) {
		t.Parallel()
		auth := auth
		auth.NoAuthUser = "guest"
		runAuthScenarios(t, auth, append(scenarios,
			authScenario{"pub first is guest", "SUB a 1\r\nPUB a 1\r\nx\r\n"},
			authScenario{"garbage first", "XYZ\r\n"},
			authScenario{"guest by name", connectWith(`"user":"guest","pass":"g"`)},
			authScenario{"guest wrong password", connectWith(`"user":"guest","pass":"x"`)},
		))
	})
}

// INFO carries auth_required and nonce exactly when the reference's does,
// and the nonce has the reference's length.
func TestAuthInfoMatchesReference(t *testing.T) {
	t.Parallel()
	_, pub := newNkeyUser(t)
	for _, tc := range []struct {
		name string
		auth server.Authorization
	}{
		{"none", server.Authorization{}},
		{"token", server.Authorization{Token: "t"}},
		{"user", server.Authorization{User: "u", Password: "p"}},
		{"users", server.Authorization{Users: []server.User{{Name: "u", Password: "p"}}}},
		{"nkeys", server.Authorization{Users: []server.User{{Nkey: pub}}}},
		{"no auth user", server.Authorization{Users: []server.User{{Name: "u", Password: "p"}}, NoAuthUser: "u"}},
		{"nkey no auth user", server.Authorization{Users: []server.User{{Nkey: pub}}, NoAuthUser: pub}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pair := startAuthPair(t, tc.auth)
			describe := func(addr string) string {
				_, _, info := readInfo(t, addr)
				nonce, _ := info["nonce"].(string)
				return fmt.Sprintf("auth_required=%v nonce_len=%d", info["auth_required"], len(nonce))
			}
			if got, want := describe(pair.bus), describe(pair.ref); got != want {
				t.Errorf("INFO: bus %s, reference %s", got, want)
			}
		})
	}
}

// signedConnect reads INFO on addr and sends a CONNECT for the nkey user
// with seed, signing the nonce with signer's seed (the same seed for a
// good signature), then tail; it returns what the server answered.
func signedConnect(t *testing.T, addr string, pub string, signer []byte, sigMode, tail string) string {
	t.Helper()
	nc, r, info := readInfo(t, addr)
	nonce, _ := info["nonce"].(string)
	kp, err := nkeys.FromSeed(signer)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := kp.Sign([]byte(nonce))
	if err != nil {
		t.Fatal(err)
	}
	var sig string
	switch sigMode {
	case "url":
		sig = base64.RawURLEncoding.EncodeToString(raw)
	case "std":
		sig = base64.StdEncoding.EncodeToString(raw)
	case "none":
	case "junk":
		sig = "!!!"
	}
	fields := fmt.Sprintf(`"nkey":%q`, pub)
	if sig != "" {
		fields += fmt.Sprintf(`,"sig":%q`, sig)
	}
	if _, err := nc.Write([]byte(connectWith(fields) + tail + "PING\r\n")); err != nil {
		t.Fatal(err)
	}
	return readUntilPong(t, nc, r)
}

// readUntilPong reads until a PONG or the close, for exchanges whose last
// op is a PING.
func readUntilPong(t *testing.T, nc interface{ SetReadDeadline(time.Time) error }, r interface{ ReadString(byte) (string, error) }) string {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sb strings.Builder
	for {
		line, err := r.ReadString('\n')
		sb.WriteString(line)
		if err != nil {
			return stripInfo(sb.String()) + "<closed>"
		}
		if line == "PONG\r\n" {
			return stripInfo(sb.String())
		}
	}
}

func TestAuthNkeyMatchesReference(t *testing.T) {
	t.Parallel()
	seed, pub := newNkeyUser(t)
	otherSeed, otherPub := newNkeyUser(t)
	pair := startAuthPair(t, server.Authorization{Users: []server.User{{Nkey: pub}, {Name: "alice", Password: "a"}}})
	for _, tc := range []struct {
		name, pub string
		signer    []byte
		sig       string
	}{
		{"signed url base64", pub, seed, "url"},
		{"signed std base64", pub, seed, "std"},
		{"signed by another key", pub, otherSeed, "url"},
		{"unknown nkey", otherPub, otherSeed, "url"},
		{"no signature", pub, seed, "none"},
		{"signature not base64", pub, seed, "junk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tail := "SUB a 1\r\nPUB a 1\r\nx\r\n"
			want := signedConnect(t, pair.ref, tc.pub, tc.signer, tc.sig, tail)
			got := signedConnect(t, pair.bus, tc.pub, tc.signer, tc.sig, tail)
			if got != want {
				t.Errorf("bus %q, reference %q", got, want)
			}
		})
	}
}

// A signature of one connection's nonce does not let in another
// connection, whose INFO carried a nonce of its own, whether the first is
// still open or closed: both servers refuse it with 'Authorization
// Violation' (security issue #22).
func TestAuthNkeyNonceReplayMatchesReference(t *testing.T) {
	t.Parallel()
	seed, pub := newNkeyUser(t)
	kp, err := nkeys.FromSeed(seed)
	must(t, err)
	pair := startAuthPair(t, server.Authorization{Users: []server.User{{Nkey: pub}}})
	replay := func(t *testing.T, addr string, closeFirst bool) string {
		first, firstR, info := readInfo(t, addr)
		nonce, _ := info["nonce"].(string)
		raw, err := kp.Sign([]byte(nonce))
		must(t, err)
		connect := connectWith(fmt.Sprintf(`"nkey":%q,"sig":%q`, pub, base64.RawURLEncoding.EncodeToString(raw)))
		// The signature is good where it was asked for.
		_, err = first.Write([]byte(connect + "PING\r\n"))
		must(t, err)
		if got := readUntilPong(t, first, firstR); got != "PONG\r\n" {
			t.Fatalf("the signed connection got %q", got)
		}
		if closeFirst {
			must(t, first.Close())
		}
		second, secondR, info := readInfo(t, addr)
		if other, _ := info["nonce"].(string); other == nonce || other == "" {
			t.Fatalf("second connection's nonce %q, first's %q", other, nonce)
		}
		_, err = second.Write([]byte(connect + "PING\r\n"))
		must(t, err)
		return readUntilPong(t, second, secondR)
	}
	for _, tc := range []struct {
		name       string
		closeFirst bool
	}{{"first still open", false}, {"first closed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := replay(t, pair.ref, tc.closeFirst)
			got := replay(t, pair.bus, tc.closeFirst)
			if got != want {
				t.Errorf("bus %q, reference %q", got, want)
			}
			if !strings.HasPrefix(got, "-ERR 'Authorization Violation'") || !strings.HasSuffix(got, "<closed>") {
				t.Errorf("replayed signature: %q, want refused and closed", got)
			}
		})
	}
}

// A connection that sends nothing is told 'Authentication Timeout' and
// closed after the auth timeout, by both servers.
func TestAuthTimeoutMatchesReference(t *testing.T) {
	t.Parallel()
	pair := startAuthPair(t, server.Authorization{Token: "t", Timeout: 200 * time.Millisecond})
	for _, tc := range []struct{ name, in string }{
		{"silent", ""},
		{"partial connect", "CONN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			observe := func(addr string) string {
				nc, r, _ := readInfo(t, addr)
				if tc.in != "" {
					_, _ = nc.Write([]byte(tc.in))
				}
				return readUntilClosed(nc, r, 5*time.Second)
			}
			if got, want := observe(pair.bus), observe(pair.ref); got != want {
				t.Errorf("bus %q, reference %q", got, want)
			}
		})
	}
	t.Run("authenticated in time stays", func(t *testing.T) {
		t.Parallel()
		observe := func(addr string) string {
			nc, r, _ := readInfo(t, addr)
			_, _ = nc.Write([]byte(connectWith(`"auth_token":"t"`)))
			return readUntilClosed(nc, r, 600*time.Millisecond)
		}
		if got, want := observe(pair.bus), observe(pair.ref); got != want {
			t.Errorf("bus %q, reference %q", got, want)
		}
	})
}
