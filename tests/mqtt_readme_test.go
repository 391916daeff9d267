package tests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's "Devices and MQTT" config and mosquitto commands work as
// shown with the bus binary. The test gives the listeners free ports and
// runs the nats CLI's two commands with nats.go.
func TestMQTTReadmeConfig(t *testing.T) {
	pubBin, subBin := mosquittoClients(t)
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(readme)
	i := strings.Index(sec, "## Devices and MQTT")
	if i < 0 {
		t.Fatal("README has no Devices and MQTT section")
	}
	sec = sec[i:]
	block := func(fence string) string {
		start := strings.Index(sec, fence) + len(fence)
		return sec[start : start+strings.Index(sec[start:], "```")]
	}
	cfg, script := block("```yaml\n"), block("```sh\n")
	if !strings.Contains(cfg, "  port: 1883") {
		t.Fatalf("README mqtt config changed; the test rewrites its port line:\n%s", cfg)
	}
	port := strconv.Itoa(freePort(t))
	cfg = strings.Replace(cfg, "  port: 1883", "  host: 127.0.0.1\n  port: "+port, 1)
	cfg += "host: 127.0.0.1\nport: -1\nhttp_port: -1\nstore_dir: " + filepath.ToSlash(t.TempDir()) + "\n"
	path := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	client, _ := startBusCommand(t, bin, "serve", "--config", path)

	// The script's mosquitto commands, as written but for host and port.
	var subArgs, pubArgs []string
	for _, line := range strings.Split(script, "\n") {
		line, _, _ = strings.Cut(line, " # ") // a comment, not the filter's #
		line = strings.TrimSuffix(strings.TrimSpace(line), "&")
		f := strings.Fields(strings.ReplaceAll(line, "'", ""))
		if len(f) == 0 {
			continue
		}
		for k := range f {
			if f[k] == "1883" {
				f[k] = port
			}
		}
		switch f[0] {
		case "mosquitto_sub":
			subArgs = append([]string{"-h", "127.0.0.1", "-C", "1", "-W", "15"}, f[1:]...)
		case "mosquitto_pub":
			pubArgs = append([]string{"-h", "127.0.0.1"}, f[1:]...)
		}
	}
	if subArgs == nil || pubArgs == nil {
		t.Fatalf("README script has no mosquitto_sub and mosquitto_pub:\n%s", script)
	}
	nc := connect(t, "nats://app:app-pass@"+client)
	sensors, err := nc.SubscribeSync("sensors.>")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	sub := exec.CommandContext(ctx, subBin, subArgs...)
	sub.Stdout, sub.Stderr = &out, &out
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sub.Wait() }()
	if b, err := exec.CommandContext(ctx, pubBin, pubArgs...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub %q: %v: %s", pubArgs, err, b)
	}
	if m, err := sensors.NextMsg(5 * time.Second); err != nil || m.Subject != "sensors.kitchen.temp" || string(m.Data) != "21.5" {
		t.Fatalf("nats sub got %v, %v", m, err)
	}
	// Until mosquitto_sub has subscribed and printed the command.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		if err := nc.Publish("cmd.kitchen.fan", []byte("on")); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("mosquitto_sub: %v: %s", err, out.String())
			}
			done = true
		case <-tick.C:
		}
	}
	if out.String() != "cmd/kitchen/fan on\n" {
		t.Fatalf("mosquitto_sub printed %q", out.String())
	}
}
