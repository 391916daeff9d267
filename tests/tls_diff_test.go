package tests

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// tlsOutcome shortens a connect result to what must match: ok, an
// authorization violation, or which side refused the handshake.
func tlsOutcome(s string) string {
	switch {
	case s == "ok", s == "authorization violation":
		return s
	case strings.Contains(s, "x509"), strings.Contains(s, "certificate signed by unknown authority"):
		return "client refused the server certificate"
	case strings.Contains(s, "certificate required"), strings.Contains(s, "bad certificate"), strings.Contains(s, "unknown certificate authority"),
		// TLS 1.3: the client may finish first and see the refusal as a
		// closed socket.
		strings.Contains(s, "closed by remote after TLS handshake"):
		return "server refused the client certificate"
	}
	return "failed: " + s
}

// The INFO of a TLS port says what the reference's says.
func TestTLSInfoMatchesReference(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "info")
	cert, key := ca.serverCert(t)
	for _, verify := range []bool{false, true} {
		t.Run(fmt.Sprint("verify=", verify), func(t *testing.T) {
			t.Parallel()
			p := startTLSPair(t, server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, Verify: verify}, server.Authorization{})
			describe := func(addr string) string {
				_, _, info := readInfo(t, addr)
				return fmt.Sprintf("tls_required=%v tls_verify=%v tls_available=%v", info["tls_required"], info["tls_verify"], info["tls_available"])
			}
			if got, want := describe(p.bus.Addr().String()), describe(refAddr(p.ref)); got != want {
				t.Errorf("INFO: bus %s, reference %s", got, want)
			}
		})
	}
}

// Handshake outcomes with nats.go: a trusted server, an untrusted one,
// client certificates from the right CA, the wrong CA or none, TLS-first
// against upgrade, all as with the reference.
func TestTLSHandshakesMatchReference(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "good")
	other := newTestCA(t, "other")
	cert, key := ca.serverCert(t)
	clientCert, clientKey := ca.issue(t, "client", certSpec{cn: "alice", client: true})
	strangerCert, strangerKey := other.issue(t, "stranger", certSpec{cn: "mallory", client: true})
	for _, tc := range []struct {
		name    string
		tls     server.TLSOptions
		clients map[string][]nats.Option
	}{
		{"server only", server.TLSOptions{CertFile: cert, KeyFile: key}, map[string][]nats.Option{
			"trusted":          {nats.Secure(clientTLS(t, ca, "", ""))},
			"root cas file":    {nats.RootCAs(ca.file)},
			"untrusted":        {nats.Secure(clientTLS(t, other, "", ""))},
			"tls first client": {nats.Secure(clientTLS(t, ca, "", "")), nats.TLSHandshakeFirst()},
		}},
		{"verify", server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, Verify: true}, map[string][]nats.Option{
			"client cert":   {nats.RootCAs(ca.file), nats.ClientCert(clientCert, clientKey)},
			"no cert":       {nats.RootCAs(ca.file)},
			"wrong ca cert": {nats.RootCAs(ca.file), nats.ClientCert(strangerCert, strangerKey)},
		}},
		{"handshake first", server.TLSOptions{CertFile: cert, KeyFile: key, HandshakeFirst: true, Timeout: 500 * time.Millisecond}, map[string][]nats.Option{
			"tls first client": {nats.RootCAs(ca.file), nats.TLSHandshakeFirst()},
			"upgrading client": {nats.RootCAs(ca.file)},
		}},
		{"handshake first with fallback", server.TLSOptions{CertFile: cert, KeyFile: key, HandshakeFirst: true, HandshakeFirstFallback: 50 * time.Millisecond}, map[string][]nats.Option{
			"tls first client": {nats.RootCAs(ca.file), nats.TLSHandshakeFirst()},
			"upgrading client": {nats.RootCAs(ca.file)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startTLSPair(t, tc.tls, server.Authorization{})
			for name, opts := range tc.clients {
				got := tlsOutcome(tryConnect(p.busURL, opts...))
				want := tlsOutcome(tryConnect(p.refURL, opts...))
				t.Logf("%s: %s", name, got)
				if got != want {
					t.Errorf("%s: bus %q, reference %q", name, got, want)
				}
			}
		})
	}
}

// verify_and_map names the user by the client certificate: its email,
// DNS name, URI or subject; the user's permissions then apply, and a
// certificate naming nobody is an authorization violation.
func TestTLSVerifyAndMapMatchesReference(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "map")
	cert, key := ca.serverCert(t)
	byEmail, byEmailKey := ca.issue(t, "email", certSpec{cn: "x", emails: []string{"alice@example.com"}, client: true})
	byDNS, byDNSKey := ca.issue(t, "dns", certSpec{cn: "y", dns: []string{"svc.example.com"}, client: true})
	bySubject, bySubjectKey := ca.issue(t, "subject", certSpec{cn: "carol", client: true})
	nobody, nobodyKey := ca.issue(t, "nobody", certSpec{cn: "nobody", client: true})
	reordered, reorderedKey := ca.issue(t, "reordered", certSpec{cn: "dave", client: true})
	deny := &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{"secret"}}}
	p := startTLSPair(t, server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, VerifyAndMap: true}, server.Authorization{Users: []server.User{
		{Name: "alice@example.com"},
		{Name: "svc.example.com", Permissions: deny},
		{Name: "CN=carol,O=bus tests"},
		{Name: "O=bus tests, CN=dave"},
	}})
	for name, opts := range map[string][]nats.Option{
		"email":     {nats.ClientCert(byEmail, byEmailKey)},
		"dns":       {nats.ClientCert(byDNS, byDNSKey)},
		"subject":   {nats.ClientCert(bySubject, bySubjectKey)},
		"nobody":    {nats.ClientCert(nobody, nobodyKey)},
		"reordered": {nats.ClientCert(reordered, reorderedKey)},
		"user sent": {nats.ClientCert(nobody, nobodyKey), nats.UserInfo("alice@example.com", "")},
	} {
		opts = append(opts, nats.RootCAs(ca.file))
		got := tlsOutcome(tryConnect(p.busURL, opts...))
		want := tlsOutcome(tryConnect(p.refURL, opts...))
		t.Logf("%s: %s", name, got)
		if got != want {
			t.Errorf("%s: bus %q, reference %q", name, got, want)
		}
	}
	// The mapped user's permissions apply.
	errs := make(chan error, 1)
	nc := connect(t, p.busURL, nats.RootCAs(ca.file), nats.ClientCert(byDNS, byDNSKey),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	_ = nc.Publish("secret", []byte("x"))
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), `Permissions Violation for Publish to "secret"`) {
			t.Errorf("mapped user: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the mapped user's publish deny did not apply")
	}
}

// A socket that never starts the handshake is closed after the TLS
// timeout; one that sends plain text instead is closed at once.
func TestTLSTimeoutAndPlainClients(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "timeout")
	cert, key := ca.serverCert(t)
	p := startTLSPair(t, server.TLSOptions{CertFile: cert, KeyFile: key, Timeout: 300 * time.Millisecond}, server.Authorization{})
	for _, in := range []string{"", "CONNECT {}\r\nPING\r\n"} {
		observe := func(addr string) string {
			nc, r, info := readInfo(t, addr)
			if info["tls_required"] != true {
				t.Errorf("INFO without tls_required: %v", info)
			}
			start := time.Now()
			if in != "" {
				_, _ = nc.Write([]byte(in))
			}
			out := readUntilClosed(nc, r, 5*time.Second)
			if in == "" && time.Since(start) < 250*time.Millisecond {
				out += " (closed before the timeout)"
			}
			return out
		}
		got, want := observe(p.bus.Addr().String()), observe(refAddr(p.ref))
		if !strings.HasSuffix(got, "<closed>") || !strings.HasSuffix(want, "<closed>") || strings.Contains(got, "before the timeout") {
			t.Errorf("input %q: bus %q, reference %q", in, got, want)
		}
	}
}

// A reload may change only tls { timeout } (nats.go's TestReloadTLS...
// suites do): new handshakes get the new bound, /varz shows it, and the
// connections already up stay, as in the reference.
func TestTLSReloadTimeout(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "reload-timeout")
	cert, key := ca.serverCert(t)
	opts := server.Options{Host: "127.0.0.1", HTTPPort: -1, StoreDir: t.TempDir(),
		TLS: server.TLSOptions{CertFile: cert, KeyFile: key, Timeout: 5 * time.Second}}
	s := startBus(t, opts)
	url := "tls://" + s.Addr().String()
	old := connect(t, url, nats.RootCAs(ca.file))
	opts.TLS.Timeout = 300 * time.Millisecond
	if err := s.Reload(opts); err != nil {
		t.Fatalf("reload of tls.timeout: %v", err)
	}
	// A client that never starts its handshake is cut at the new bound.
	nc, r, _ := readInfo(t, s.Addr().String())
	start := time.Now()
	if out := readUntilClosed(nc, r, 5*time.Second); !strings.HasSuffix(out, "<closed>") || time.Since(start) > 3*time.Second {
		t.Errorf("silent client after the reload: %q after %v", out, time.Since(start))
	}
	var varz struct {
		TLSTimeout float64 `json:"tls_timeout"`
	}
	getJSON(t, "http://"+s.HTTPAddr().String()+"/varz", &varz)
	if varz.TLSTimeout != 0.3 {
		t.Errorf("/varz tls_timeout %v, want 0.3", varz.TLSTimeout)
	}
	if got := tryConnect(url, nats.RootCAs(ca.file)); got != "ok" {
		t.Errorf("new connection after the reload: %s", got)
	}
	if err := old.Publish("still", []byte("here")); err != nil || old.FlushTimeout(5*time.Second) != nil {
		t.Errorf("connection made before the reload: %v", err)
	}
}

// A SIGHUP-style reload makes new connections use the new certificate,
// while those already up stay.
func TestTLSReloadKeepsConnections(t *testing.T) {
	t.Parallel()
	first, second := newTestCA(t, "first"), newTestCA(t, "second")
	cert, key := first.serverCert(t)
	s := startBus(t, server.Options{TLS: server.TLSOptions{CertFile: cert, KeyFile: key}})
	url := "tls://" + s.Addr().String()
	old := connect(t, url, nats.RootCAs(first.file))

	newCert, newKey := second.serverCert(t)
	for _, f := range [][2]string{{newCert, cert}, {newKey, key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if got := tryConnect(url, nats.RootCAs(second.file)); got != "ok" {
		t.Errorf("new connection with the new CA: %s", got)
	}
	if got := tlsOutcome(tryConnect(url, nats.RootCAs(first.file))); got != "client refused the server certificate" {
		t.Errorf("new connection with the old CA: %s", got)
	}
	if err := old.Publish("still", []byte("here")); err != nil || old.FlushTimeout(5*time.Second) != nil || !old.IsConnected() {
		t.Errorf("connection made before the reload was lost: %v", err)
	}
	// A broken file keeps the certificate in use.
	if err := os.WriteFile(key, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.ReloadTLS(); err == nil {
		t.Error("reload of a broken key succeeded")
	}
	if got := tryConnect(url, nats.RootCAs(second.file)); got != "ok" {
		t.Errorf("after a failed reload: %s", got)
	}
}

// A reload that finds new contents under the same TLS file names (a
// certificate rotation) says so in its log line, and one that finds the
// same contents does not.
func TestTLSReloadLogsRotatedFiles(t *testing.T) {
	t.Parallel()
	first, second := newTestCA(t, "first"), newTestCA(t, "second")
	cert, key := first.serverCert(t)
	logger, logs := newLogBuffer()
	opts := server.Options{Host: "127.0.0.1", StoreDir: t.TempDir(), Logger: logger, TLS: server.TLSOptions{CertFile: cert, KeyFile: key}}
	s := startBus(t, opts)
	reloaded := func() string {
		t.Helper()
		if err := s.Reload(opts); err != nil {
			t.Fatal(err)
		}
		lines := logs.lines("config reloaded")
		if len(lines) == 0 {
			t.Fatal("no 'config reloaded' line")
		}
		return lines[len(lines)-1]
	}
	if line := reloaded(); !strings.Contains(line, "changed=none") {
		t.Errorf("reload with the same files: %s", line)
	}
	newCert, newKey := second.serverCert(t)
	for _, f := range [][2]string{{newCert, cert}, {newKey, key}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if line := reloaded(); !strings.Contains(line, "changed=tls") {
		t.Errorf("reload after a rotation: %s", line)
	}
	if got := tryConnect("tls://"+s.Addr().String(), nats.RootCAs(second.file)); got != "ok" {
		t.Errorf("new connection with the new CA: %s", got)
	}
}

// Monitoring answers over HTTPS with the client port's certificate.
func TestTLSMonitoringOverHTTPS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "https")
	cert, key := ca.serverCert(t)
	s := startBus(t, server.Options{HTTPSPort: -1, TLS: server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, Verify: true}})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: clientTLS(t, ca, "", "")}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + s.HTTPSAddr().String() + "/varz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v["server_id"] != s.ID() {
		t.Errorf("varz over https: %v, %v", v["server_id"], err)
	}
}

// TLS-first: the server's first bytes are the handshake's, and INFO
// comes over TLS.
func TestTLSHandshakeFirstSendsInfoOverTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "first")
	cert, key := ca.serverCert(t)
	s := startBus(t, server.Options{TLS: server.TLSOptions{CertFile: cert, KeyFile: key, HandshakeFirst: true}})
	raw, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	cfg := clientTLS(t, ca, "", "")
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(raw, cfg)
	_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(tc).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "INFO {") || !strings.Contains(line, `"tls_required":true`) {
		t.Errorf("first line over TLS %q, %v", line, err)
	}
}
