package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// The same nats.conf, with the key from the environment, encrypts both
// servers' stores: a message published to each reads back, and neither
// store shows it.
func TestJetStreamEncryptionConfDiff(t *testing.T) {
	t.Setenv("TESTJS_DIFF_KEY", "diff-secret-key")
	for _, cipher := range []string{"chachapoly", "aes"} {
		t.Run(cipher, func(t *testing.T) {
			p := startConfPair(t, "listen: 127.0.0.1:-1\nhttp: 127.0.0.1:-1\njetstream { store_dir: STORE, cipher: "+cipher+", key: $TESTJS_DIFF_KEY }\n")
			ctx := ctxT(t)
			for _, addr := range []string{p.busClient, p.refClient} {
				js, err := jetstream.New(connect(t, "nats://"+addr))
				if err != nil {
					t.Fatal(err)
				}
				st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DIFF", Subjects: []string{"diff.>"}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := js.Publish(ctx, "diff.secret", []byte(encPayload)); err != nil {
					t.Fatal(err)
				}
				if m, err := st.GetMsg(ctx, 1); err != nil || string(m.Data) != encPayload {
					t.Fatalf("%s: read back %v", addr, err)
				}
			}
			// Both stores live under this test's temporary root.
			if found := plaintextOnDisk(t, filepath.Dir(t.TempDir()), encPayload); len(found) > 0 {
				t.Fatalf("plaintext on disk:\n%s", strings.Join(found, "\n"))
			}
		})
	}
}

// Both servers refuse an unknown cipher and a key from an unset
// variable; bus also refuses a cipher without a key, which the reference
// accepts and ignores (nothing encrypted).
func TestJetStreamEncryptionConfRefusalsDiff(t *testing.T) {
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text, bus string
		refFails  bool
	}{
		{"jetstream { store_dir: STORE, cipher: rot13, key: k }", "unknown cipher", true},
		{"jetstream { store_dir: STORE, key: $TESTJS_UNSET_VAR }", "TESTJS_UNSET_VAR", true},
		{"jetstream { store_dir: STORE, cipher: aes }", "set without key", false},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "nats.conf")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(tc.text, "STORE", filepath.Join(dir, "store"))), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "-c", path).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.bus) {
			t.Errorf("%s: bus exit %v, output %q; want exit 2 saying %q", tc.text, err, out, tc.bus)
		}
		if strings.Contains(string(out), "k }") {
			t.Errorf("%s: bus repeats the key: %q", tc.text, out)
		}
		_, rerr := natsserver.ProcessConfigFile(path)
		if (rerr != nil) != tc.refFails {
			t.Errorf("%s: reference error %v, want failure %v", tc.text, rerr, tc.refFails)
		}
	}
}
