package tests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// dlqRun is one run of the bus binary's dlq command.
type dlqRun struct {
	stdout, stderr string
	code           int
}

// runDLQ runs `bus dlq args…` with only env's NATS_* and XDG_CONFIG_HOME
// settings, so the machine's own nats contexts never leak in.
func runDLQ(t *testing.T, env []string, args ...string) dlqRun {
	t.Helper()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"dlq"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUS_") && !strings.HasPrefix(kv, "NATS_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	r := dlqRun{}
	var ee *exec.ExitError
	if err := cmd.Run(); errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run bus dlq %q: %v", args, err)
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}

// securedBus is the README's Security section in one server: TLS with
// client certificates (verify), a password user and an nkey user, and a
// DLQ stream holding one message that is not a dead letter.
type securedBus struct {
	url                  string
	ca                   *testCA
	cert, key, nkeyFile  string
	adminUser, adminPass string
}

func startSecuredBus(t *testing.T) securedBus {
	t.Helper()
	ca := newTestCA(t, "dlq")
	serverCert, serverKey := ca.serverCert(t)
	clientCert, clientKey := ca.issue(t, "client", certSpec{cn: "dlq client", client: true})
	seed, pub := newNkeyUser(t)
	nkeyFile := filepath.Join(t.TempDir(), "worker.nk")
	if err := os.WriteFile(nkeyFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startBus(t, server.Options{
		JetStream: true,
		TLS:       server.TLSOptions{CertFile: serverCert, KeyFile: serverKey, CAFile: ca.file, Verify: true},
		Authorization: server.Authorization{Users: []server.User{
			{Name: "admin", Password: "adminpw"},
			{Nkey: pub},
		}},
	})
	b := securedBus{url: "tls://" + s.Addr().String(), ca: ca, cert: clientCert, key: clientKey, nkeyFile: nkeyFile, adminUser: "admin", adminPass: "adminpw"}
	nc := connect(t, b.url, nats.UserInfo("admin", "adminpw"), nats.Secure(clientTLS(t, ca, clientCert, clientKey)))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"dlq.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "dlq.x", []byte("not a dead letter")); err != nil {
		t.Fatal(err)
	}
	return b
}

var listedSeqOne = regexp.MustCompile(`(?m)^SEQ .*\n1 +\d{4}-`)

// bus dlq reaches a bus secured as the README's Security section does,
// with the nats CLI's flags, its environment variables and its contexts.
func TestCLIDLQReachesSecuredBus(t *testing.T) {
	t.Parallel()
	b := startSecuredBus(t)
	tlsFlags := []string{"--tlsca", b.ca.file, "--tlscert", b.cert, "--tlskey", b.key}

	ctxDir := t.TempDir()
	writeJSON := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The nats CLI's own file layout and field names.
	ctxBody := `{"description":"secured","url":"` + b.url + `","nkey":"` + b.nkeyFile + `","cert":"` + b.cert +
		`","key":"` + b.key + `","ca":"` + b.ca.file + `","color_scheme":"","jetstream_domain":""}`
	writeJSON(filepath.Join(ctxDir, "nats", "context", "secured.json"), ctxBody)
	writeJSON(filepath.Join(ctxDir, "nats", "context", "elsewhere.json"), strings.Replace(ctxBody, b.url, "nats://127.0.0.1:1", 1))
	singleFile := filepath.Join(t.TempDir(), "single.json")
	writeJSON(singleFile, ctxBody)
	selected := t.TempDir()
	writeJSON(filepath.Join(selected, "nats", "context", "secured.json"), ctxBody)
	writeJSON(filepath.Join(selected, "nats", "context.txt"), "secured\n")

	ok := []struct {
		name string
		env  []string
		args []string
	}{
		{"password", nil, append([]string{"-s", b.url, "--user", b.adminUser, "--password", b.adminPass}, tlsFlags...)},
		{"nkey", nil, append([]string{"-s", b.url, "--nkey", b.nkeyFile}, tlsFlags...)},
		{"environment", []string{"NATS_URL=" + b.url, "NATS_NKEY=" + b.nkeyFile, "NATS_CA=" + b.ca.file, "NATS_CERT=" + b.cert, "NATS_KEY=" + b.key}, nil},
		{"context_name", []string{"XDG_CONFIG_HOME=" + ctxDir}, []string{"--context", "secured"}},
		{"context_env", []string{"XDG_CONFIG_HOME=" + ctxDir, "NATS_CONTEXT=secured"}, nil},
		{"context_file", nil, []string{"--context", singleFile}},
		{"context_selected", []string{"XDG_CONFIG_HOME=" + selected}, nil},
		// A flag beats the context, as in the nats CLI: -s replaces
		// the context's unreachable url, the rest comes from it.
		{"flag_over_context", []string{"XDG_CONFIG_HOME=" + ctxDir}, []string{"--context", "elsewhere", "-s", b.url}},
	}
	for _, tt := range ok {
		r := runDLQ(t, tt.env, append([]string{"ls", "DLQ"}, tt.args...)...)
		if r.code != 0 || !listedSeqOne.MatchString(r.stdout) {
			t.Errorf("%s: bus dlq ls: exit %d\nstdout:\n%s\nstderr:\n%s", tt.name, r.code, r.stdout, r.stderr)
		}
	}

	bad := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"no_client_certificate", nil, []string{"-s", b.url, "--tlsca", b.ca.file, "--nkey", b.nkeyFile}, 1, "connect to " + b.url},
		{"wrong_password", nil, append([]string{"-s", b.url, "--user", "admin", "--password", "nope"}, tlsFlags...), 1, "Authorization Violation"},
		{"missing_file", nil, []string{"-s", b.url, "--tlsca", filepath.Join(t.TempDir(), "ca.pem")}, 2, "--tlsca"},
		{"cert_without_key", nil, []string{"-s", b.url, "--tlsca", b.ca.file, "--tlscert", b.cert}, 2, "--tlscert and --tlskey"},
		{"unknown_context", []string{"XDG_CONFIG_HOME=" + ctxDir}, []string{"--context", "nope"}, 2, "--context nope: no such context"},
	}
	for _, tt := range bad {
		r := runDLQ(t, tt.env, append([]string{"ls", "DLQ"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: bus dlq ls: exit %d, want %d with %q\nstderr:\n%s", tt.name, r.code, tt.code, tt.want, r.stderr)
		}
	}
}

// Redriving one seq that moves nothing is a mistake in the command line:
// bus dlq says which (no such message, or not a dead letter) and exits 2.
func TestCLIDLQRedriveMissingSeq(t *testing.T) {
	t.Parallel()
	b := startSecuredBus(t)
	conn := []string{"-s", b.url, "--nkey", b.nkeyFile, "--tlsca", b.ca.file, "--tlscert", b.cert, "--tlskey", b.key}
	for _, tt := range []struct {
		seq, want string
	}{
		{"99", "DLQ seq 99 does not exist"},
		{"1", "DLQ seq 1 is not a dead letter"},
	} {
		r := runDLQ(t, nil, append([]string{"redrive", "DLQ", "--seq", tt.seq}, conn...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("redrive --seq %s: exit %d, want 2 with %q\nstdout:\n%s\nstderr:\n%s", tt.seq, r.code, tt.want, r.stdout, r.stderr)
		}
	}
}
