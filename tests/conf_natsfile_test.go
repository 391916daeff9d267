package tests

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
)

// servingAddrs is the bus binary's "serving" log line: the bound client
// and monitoring addresses.
var servingAddrs = regexp.MustCompile(`msg=serving client=(\S+) monitoring=(\S+)`)

// confPair is bus and the reference, each started on its own copy of one
// nats-server .conf file.
type confPair struct {
	busClient, busHTTP string // host:port
	refClient, refHTTP string
	ref                *natsserver.Server
}

// startConfPair writes text (with STORE replaced by a store directory of
// each server's own) as nats.conf, runs the bus binary on it with
// nats-server's command line (bus -c nats.conf), and the embedded
// reference with nats-server's own ProcessConfigFile.
func startConfPair(t *testing.T, text string) confPair {
	t.Helper()
	write := func(name string) string {
		dir := t.TempDir()
		path := filepath.Join(dir, name)
		body := strings.ReplaceAll(text, "STORE", filepath.Join(dir, "store"))
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var p confPair
	p.busClient, p.busHTTP = startBusConf(t, write("nats.conf"))

	opts, err := natsserver.ProcessConfigFile(write("nats.conf"))
	if err != nil {
		t.Fatalf("reference refuses the config: %v", err)
	}
	opts.NoLog, opts.NoSigs = true, true
	ns := startReferenceServer(t, opts)
	p.ref, p.refClient = ns, ns.Addr().String()
	if a := ns.MonitorAddr(); a != nil {
		p.refHTTP = a.String()
	}
	return p
}

// startBusConf runs the bus binary as "bus -c path" and returns its
// client and monitoring addresses once it serves.
func startBusConf(t *testing.T, path string) (client, monitoring string) {
	t.Helper()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	return startBusCommand(t, bin, "-c", path)
}

// startBusCommand runs the bus binary with args (and no BUS_* variables)
// and returns its client and monitoring addresses once it serves.
func startBusCommand(t *testing.T, bin string, args ...string) (client, monitoring string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan []string, 1)
	var mu sync.Mutex
	var log strings.Builder // guarded by mu
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingAddrs.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrs <- m[1:]:
				default:
				}
			}
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done; _ = cmd.Wait() })
	select {
	case a := <-addrs:
		return a[0], a[1]
	case <-done:
	case <-time.After(20 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("bus %q did not serve; stderr:\n%s", args, log.String())
	return "", ""
}

// info reads the INFO a server sends a new connection.
func info(t *testing.T, addr string) map[string]any {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("INFO from %s: %q, %v", addr, line, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "INFO ")), &m); err != nil {
		t.Fatalf("INFO from %s: %v", addr, err)
	}
	return m
}

// varz fetches /varz from a monitoring address.
func varz(t *testing.T, addr string) map[string]any {
	t.Helper()
	code, body := fetch(t, "http://"+addr+"/varz")
	if code != 200 {
		t.Fatalf("/varz on %s: %d", addr, code)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("/varz on %s: %v", addr, err)
	}
	return m
}

// sameReports compares what bus and the reference report in INFO and
// /varz at the given fields (paths into the JSON, "a.b" for nesting).
func (p confPair) sameReports(t *testing.T, infoFields, varzFields []string) {
	t.Helper()
	busInfo, refInfo := info(t, p.busClient), info(t, p.refClient)
	for _, f := range infoFields {
		if b, r := field(busInfo, f), field(refInfo, f); !jsonEqual(b, r) {
			t.Errorf("INFO %s: bus %v, reference %v", f, b, r)
		}
	}
	if len(varzFields) == 0 {
		return
	}
	busVarz, refVarz := varz(t, p.busHTTP), varz(t, p.refHTTP)
	for _, f := range varzFields {
		if b, r := field(busVarz, f), field(refVarz, f); !jsonEqual(b, r) {
			t.Errorf("/varz %s: bus %v, reference %v", f, b, r)
		}
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
