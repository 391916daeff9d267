package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var httpsMonitoring = regexp.MustCompile(`monitoring_https=(\S+)`)

// walkReadmeTLS runs the README's TLS block and its transcript: bus with
// the block (its tls/ files made by a test CA), the nats CLI with and
// without a client certificate, curl to /healthz over HTTPS, and SIGHUP,
// after which new connections get the files as they are now.
func walkReadmeTLS(t *testing.T, ctx context.Context, nats, bus, section, yaml string, steps []transcriptStep) {
	// TLS 1.3 refuses a missing client certificate after the handshake,
	// so the CLI may find the connection closed rather than read the
	// alert; the README says so, and either is the refusal.
	const refused = "nats: error: remote error: tls: certificate required"
	closed := regexp.MustCompile("`(nats: error: nats: tls error: connection closed by remote[^`]*?)…`").FindStringSubmatch(section)
	if closed == nil {
		t.Fatal("Securing bus does not say how else a refused client certificate may read")
	}
	for i := range steps {
		if slices.Contains(steps[i].output, refused) {
			steps[i].alternatives = map[string]string{refused: closed[1]}
		}
	}
	tlsDir := filepath.Join(t.TempDir(), "tls")
	writeReadmeCerts(t, tlsDir, "readme")
	cfg := strings.ReplaceAll(yaml, "tls/", tlsDir+"/")
	url, p := startBusYAML(t, bus, cfg, "BUS_HTTPS_PORT=-1")
	m := httpsMonitoring.FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatalf("no HTTPS monitoring in the serving line:\n%s", p.logText())
	}
	tlsURL := "tls://" + strings.TrimPrefix(url, "nats://")
	replace := strings.NewReplacer("tls://127.0.0.1:4222", tlsURL, "https://127.0.0.1:8443", "https://"+m[1], "tls/", tlsDir+"/")
	if len(steps) == 0 || !strings.HasPrefix(steps[0].command, "nats ") {
		t.Fatalf("the TLS transcript does not start with a nats command: %+v", steps)
	}
	for _, s := range steps {
		switch {
		case strings.HasPrefix(s.command, "nats "):
			runNATSStep(t, ctx, nats, tlsURL, s, replace)
		case strings.HasPrefix(s.command, "curl "):
			args := shellWords(t, strings.TrimPrefix(s.command, "curl "))
			for i := range args {
				args[i] = replace.Replace(args[i])
			}
			if out := curlWithCA(t, ctx, args); !shownInOrder(s, out) {
				t.Errorf("$ %s: the README shows\n%s\nbut curl printed\n%s", s.command, strings.Join(s.output, "\n"), out)
			}
		case s.command == "kill -HUP $(pidof bus)":
			// New files under the same names, from another CA: after the
			// signal, the first step (which reads tls/ca.pem and the
			// client files) works only if bus serves the new ones.
			writeReadmeCerts(t, tlsDir, "rotated")
			if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			p.waitLog(t, `msg="config reloaded"`)
			runNATSStep(t, ctx, nats, tlsURL, steps[0], replace)
		default:
			t.Errorf("the TLS transcript has %q, which this walk does not know how to run", s.command)
		}
	}
}

// writeReadmeCerts writes the files the README's TLS block names into
// dir: ca.pem, server.pem and server-key.pem, client.pem and
// client-key.pem, all from a new CA.
func writeReadmeCerts(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, name)
	serverCert, serverKey := ca.serverCert(t)
	clientCert, clientKey := ca.issue(t, "client", certSpec{cn: name + " client", client: true})
	for from, to := range map[string]string{ca.file: "ca.pem", serverCert: "server.pem", serverKey: "server-key.pem", clientCert: "client.pem", clientKey: "client-key.pem"} {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// curlWithCA runs the README's `curl --cacert CA URL`: with curl where it
// is installed, else with Go's client trusting CA the same way.
func curlWithCA(t *testing.T, ctx context.Context, args []string) string {
	t.Helper()
	if len(args) != 3 || args[0] != "--cacert" {
		t.Fatalf("curl %q is not `curl --cacert CA URL`", args)
	}
	if bin, err := exec.LookPath("curl"); err == nil {
		out, err := exec.CommandContext(ctx, bin, append([]string{"-sS"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	pemBytes, err := os.ReadFile(args[1])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("no certificate in %s", args[1])
	}
	c := http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(args[2])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	c.CloseIdleConnections()
	return string(b)
}
