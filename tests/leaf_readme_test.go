package tests

import (
	"bufio"
	"context"
	"fmt"
	mathrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// The README's "Growing past one machine" configs work as shown (issue
// 15): the hub config runs three reference nodes, the bus leaf config
// runs the real bus binary, with only hosts, ports and directories
// rewritten to the test's, and messages cross both ways.
func TestLeafReadmeConfigsWork(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	hubConf := readmeSnippet(t, string(readme), "hub.conf")
	leafConf := readmeSnippet(t, string(readme), "bus-leaf.yaml")

	// Every hubN:port of the README becomes a loopback port of the test.
	const nodes = 3
	var pairs []string
	clientPorts, leafPorts := make([]int, nodes), make([]int, nodes)
	for i := range nodes {
		name := fmt.Sprintf("hub%d", i+1)
		clientPorts[i], leafPorts[i] = freeTCPPort(t), freeTCPPort(t)
		pairs = append(pairs,
			name+":6222", fmt.Sprintf("127.0.0.1:%d", freeTCPPort(t)),
			name+":7422", fmt.Sprintf("127.0.0.1:%d", leafPorts[i]))
	}
	ports := strings.NewReplacer(pairs...)

	var hub []*natsserver.Server
	for i := range nodes {
		name := fmt.Sprintf("hub%d", i+1)
		own := ports.Replace(name + ":6222")
		conf := strings.NewReplacer(
			"server_name: hub1", "server_name: "+name,
			"listen: 0.0.0.0:4222", fmt.Sprintf("listen: 127.0.0.1:%d", clientPorts[i]),
			"listen: 0.0.0.0:6222", "listen: "+own,
			"port: 7422", fmt.Sprintf("host: 127.0.0.1, port: %d", leafPorts[i]),
			"/var/lib/nats", t.TempDir(),
		).Replace(ports.Replace(hubConf))
		if strings.Contains(conf, "0.0.0.0") || strings.Contains(conf, "hub1:") || strings.Contains(conf, "/var/lib") {
			t.Fatalf("README hub config changed; the test rewrites its hosts, ports and store_dir:\n%s", conf)
		}
		path := filepath.Join(t.TempDir(), "hub.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := natsserver.ProcessConfigFile(path)
		if err != nil {
			t.Fatalf("README hub config: %v\n%s", err, conf)
		}
		opts.NoLog, opts.NoSigs = true, true
		hub = append(hub, startReferenceServer(t, opts))
	}
	eventually(t, 10*time.Second, func() bool {
		for _, ns := range hub {
			if ns.NumRoutes() < nodes-1 {
				return false
			}
		}
		return true
	})

	leafYAML := strings.NewReplacer("/var/lib/bus", t.TempDir()).Replace(ports.Replace(leafConf))
	if strings.Contains(leafYAML, "hub1:") || strings.Contains(leafYAML, "/var/lib") {
		t.Fatalf("README leaf config changed; the test rewrites its hub URLs and store_dir:\n%s", leafYAML)
	}
	busURL := startBusWithConfig(t, leafYAML)
	eventually(t, 10*time.Second, func() bool {
		n := 0
		for _, ns := range hub {
			n += ns.NumLeafNodes()
		}
		return n == 1
	})

	onHub := connect(t, hub[1].ClientURL())
	onLeaf := connect(t, busURL)

	hubSub, err := onHub.SubscribeSync("orders.>")
	if err != nil {
		t.Fatal(err)
	}
	awaitRoute(t, onLeaf, hubSub, "orders.probe")
	if err := onLeaf.Publish("orders.new", []byte("hi from bus")); err != nil {
		t.Fatal(err)
	}
	if m, err := hubSub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "hi from bus" {
		t.Fatalf("hub client got %v, %v", m, err)
	}

	leafSub, err := onLeaf.SubscribeSync("alerts.*")
	if err != nil {
		t.Fatal(err)
	}
	onHub3 := connect(t, hub[2].ClientURL())
	awaitRoute(t, onHub3, leafSub, "alerts.probe")
	if err := onHub3.Publish("alerts.disk", []byte("hi from hub")); err != nil {
		t.Fatal(err)
	}
	if m, err := leafSub.NextMsg(5 * time.Second); err != nil || string(m.Data) != "hi from hub" {
		t.Fatalf("bus client got %v, %v", m, err)
	}

	// nats --js-domain bus stream ls, from a hub client.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	local, err := jetstream.New(onLeaf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
		t.Fatal(err)
	}
	fromHub, err := jetstream.NewWithDomain(onHub3, "bus")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	lister := fromHub.StreamNames(ctx)
	for name := range lister.Name() {
		names = append(names, name)
	}
	if err := lister.Err(); err != nil || len(names) != 1 || names[0] != "ORDERS" {
		t.Fatalf("streams in domain bus, from the hub: %v, %v", names, err)
	}
}

// readmeSnippet is the fenced block that follows README.md's marker
// "<!-- readme:name".
func readmeSnippet(t *testing.T, readme, name string) string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "<!-- readme:"+name)
	if !ok {
		t.Fatalf("README.md has no marker readme:%s", name)
	}
	_, after, ok = strings.Cut(after, "```")
	if !ok {
		t.Fatalf("README.md: no code block after readme:%s", name)
	}
	_, body, _ := strings.Cut(after, "\n") // past the info string
	body, _, ok = strings.Cut(body, "```")
	if !ok {
		t.Fatalf("README.md: code block after readme:%s is not closed", name)
	}
	return body
}

// startBusWithConfig runs the bus binary with the config written as
// YAML, listening on a free loopback port without monitoring, and
// returns its client URL once it serves.
func startBusWithConfig(t *testing.T, yaml string) string {
	t.Helper()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", path, "--host", "127.0.0.1", "--port", "0", "--http-port", "0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	var mu sync.Mutex
	var log strings.Builder // guarded by mu
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
	}()
	select {
	case a := <-addr:
		return "nats://" + a
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("bus did not start with the README's leaf config:\n%s\nstderr:\n%s", yaml, log.String())
	}
	return ""
}

// freeTCPPort is a loopback port free a moment ago, for configs that
// name their ports. It is drawn below Linux's ephemeral range (32768 and
// up), so the servers other tests start on port 0 cannot take it between
// this check and its use.
func freeTCPPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		port := 20000 + mathrand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			_ = ln.Close()
			return port
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return 0
}
