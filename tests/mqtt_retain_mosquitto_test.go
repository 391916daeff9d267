package tests

import (
	"context"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// TestMosquittoRetained: Debian's mosquitto_pub -r sets a retained
// message that a later mosquitto_sub gets at once, flagged retained
// (--retained-only keeps it), and mosquitto_pub -r -n clears it.
func TestMosquittoRetained(t *testing.T) {
	pubBin, subBin := mosquittoClients(t)
	s, _ := startBusMQTT(t, server.Options{JetStream: true})
	_, port, _ := net.SplitHostPort(s.MQTTAddr().String())
	common := []string{"-h", "127.0.0.1", "-p", port, "-V", "mqttv311"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(bin string, args ...string) string {
		t.Helper()
		b, err := exec.CommandContext(ctx, bin, append(common, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v: %s", bin, args, err, b)
		}
		return string(b)
	}
	// -q 1: mosquitto_pub exits once the PUBACK says the server handled it.
	run(pubBin, "-i", "rp", "-q", "1", "-r", "-t", "home/door", "-m", "closed")
	// -C 1 -W 5: the retained message, at once, or fail after 5 s.
	if got := run(subBin, "-i", "rs", "-t", "home/#", "-v", "-C", "1", "-W", "5"); got != "home/door closed\n" {
		t.Errorf("mosquitto_sub printed %q", got)
	}
	// --retained-only: only messages flagged retained, ending at the first live one.
	if got := run(subBin, "-i", "rs2", "-t", "home/door", "-v", "-C", "1", "-W", "5", "--retained-only"); got != "home/door closed\n" {
		t.Errorf("mosquitto_sub --retained-only printed %q", got)
	}
	run(pubBin, "-i", "rp", "-q", "1", "-r", "-n", "-t", "home/door")
	cmd := exec.CommandContext(ctx, subBin, append(common, "-i", "rs3", "-t", "home/#", "-v", "-C", "1", "-W", "2")...)
	if b, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("after clearing, mosquitto_sub got %q", b)
	}
}
