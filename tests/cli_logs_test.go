package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// The serving line says where monitoring listens, over HTTP and HTTPS:
// an HTTPS-only server is not "monitoring=disabled" (issue 23).
func TestCLIServingLineNamesHTTPSMonitoring(t *testing.T) {
	t.Parallel()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, "logs")
	cert, key := ca.serverCert(t)
	cfg := filepath.Join(t.TempDir(), "bus.yaml")
	text := "host: 127.0.0.1\nhttps_port: -1\ntls:\n  cert_file: " + cert + "\n  key_file: " + key + "\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, httpPort string
		want           *regexp.Regexp
	}{
		{"https_only", "0", regexp.MustCompile(`msg=serving client=\S+ monitoring=https-only monitoring_https=127\.0\.0\.1:\d+\n`)},
		{"both", "-1", regexp.MustCompile(`msg=serving client=\S+ monitoring=127\.0\.0\.1:\d+ monitoring_https=127\.0\.0\.1:\d+\n`)},
	} {
		p := startDeployProc(t, []string{bin, "serve", "-c", cfg, "--store-dir", t.TempDir()}, "BUS_HTTP_PORT="+tc.httpPort)
		p.serving(t)
		if !tc.want.MatchString(p.logText()) {
			t.Errorf("%s: the serving line does not match %s:\n%s", tc.name, tc.want, p.logText())
		}
	}
}

// A reload that changes nothing says so, rather than changed="".
func TestCLINoOpReloadLogsNone(t *testing.T) {
	t.Parallel()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(cfg, []byte("host: 127.0.0.1\nstore_dir: "+t.TempDir()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDeployProc(t, []string{bin, "serve", "-c", cfg})
	p.serving(t)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	p.waitLog(t, `msg="config reloaded" changed=none`)
}
