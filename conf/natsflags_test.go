package conf

import (
	"testing"

	"github.com/spf13/pflag"
)

// parseNATSFlags is parseFlags with nats-server's --user, --tls… too.
func parseNATSFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("bus", pflag.ContinueOnError)
	AddFlags(fs)
	AddNATSFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %q: %v", args, err)
	}
	return fs
}

// nats-server's --user/--pass/--auth and --tls* flags set the file-only
// blocks, over the file, and a bool flag alone means true.
func TestNATSFlagsBeatTheFile(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, "nats.conf", "authorization { user: a, password: b, timeout: 3 }\ntls { cert_file: c.pem, key_file: k.pem }\njetstream: false\n")
	cfg, err := Load(path, parseNATSFlags(t, "--user", "u", "--pass", "p", "--tlscacert", "ca.pem", "--tlsverify", "--jetstream"))
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Authorization; a.User != "u" || a.Password != "p" || a.Timeout.Seconds() != 3 {
		t.Errorf("authorization %+v", a)
	}
	if tl := cfg.TLS; tl.CertFile != "c.pem" || tl.CAFile != "ca.pem" || !tl.Verify {
		t.Errorf("tls %+v", tl)
	}
	if !cfg.JetStream.Enabled {
		t.Error("--jetstream alone did not turn JetStream on over the file's false")
	}
	cfg, err = Load("", parseNATSFlags(t, "--auth", "s3cr3t"))
	if err != nil || cfg.Authorization == nil || cfg.Authorization.Token != "s3cr3t" {
		t.Errorf("--auth: %v, %+v", err, cfg.Authorization)
	}
	for _, args := range [][]string{{"--user", "u"}, {"--tls"}, {"--tlscert", "c.pem"}} {
		if _, err := Load("", parseNATSFlags(t, args...)); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
