// Package ntf stands in for orbit.go's ntf-client in nats.go's own test
// suites, so that they run against bus: every server a test asks for is a
// bus process (`bus serve -c`) whose config file is rendered from the
// test's snippets, in nats-server's syntax, as the tester renders it for
// nats-server. The API is the part of ntf-client that nats.go's tests call.
//
// What bus has no equivalent of fails or skips the test, never silently
// passes: a cluster or super-cluster (bus has no routes or gateways) skips
// it, naming why.
package ntf

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"github.com/synadia-io/orbit.go/ntf-client/api"
)

// Client makes instances. Create one with New.
type Client struct {
	host string // what the tests dial: the tester URL's host
}

// New returns a client; server is the tester's URL (only its host is used:
// the servers are on this machine).
func New(t testing.TB, server string, _ ...nats.Option) *Client {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("could not parse server URL: %v", err)
	}
	return &Client{host: u.Hostname()}
}

// Close releases nothing: a client holds no connection.
func (c *Client) Close(testing.TB) {}

// Instance is one bus server made by CreateServer.
type Instance struct {
	ID      string
	Kind    string
	Servers []*api.ManagedServer
	TLS     *api.TLSMaterial

	mu        sync.Mutex // guards the fields below
	root      string
	jetStream bool
	tls       *tlsSettings
	tlsFiles  *tlsFiles
	procs     map[string]*process
	configs   map[string]serverConfig
	destroyed bool
}

// CreateServer starts one bus server, with JetStream when js, and fails
// the test when it does not come up.
func (c *Client) CreateServer(t testing.TB, js bool, opts ...CreateOption) *Instance {
	t.Helper()
	co := createOptions{}
	for _, o := range opts {
		o.applyCreate(&co)
	}
	if err := checkSnippets(co.snippets, js, co.tls != nil); err != nil {
		t.Fatalf("Request to tester.create.server failed: %v", err)
	}
	id := nuid.Next()
	root, err := os.MkdirTemp(os.Getenv("UPSTREAM_BUS_DIR"), "bus-"+id[len(id)-6:]+"-")
	if err != nil {
		t.Fatalf("instance dir: %v", err)
	}
	inst := &Instance{ID: id, Kind: "server", root: root, jetStream: js,
		procs: map[string]*process{}, configs: map[string]serverConfig{}}
	t.Cleanup(func() { inst.Destroy(t) }) // idempotent: the test's own Destroy usually runs first
	if co.tls != nil {
		inst.tls = &tlsSettings{mutual: co.tls.Mode != api.TLSModeServer, handshakeFirst: co.tls.HandshakeFirst, timeout: co.tls.Timeout}
		inst.tlsFiles, inst.TLS, err = mintTLS(root, co.tls.SANs, inst.tls.mutual)
		if err != nil {
			t.Fatalf("generated TLS: %v", err)
		}
	}

	name := "bus-" + id[len(id)-8:]
	dir, err := newServerDir(root, name)
	if err != nil {
		t.Fatalf("server dir: %v", err)
	}
	listeners := listenersOf(co.snippets)
	ports, err := freePorts(1 + len(listeners))
	if err != nil {
		t.Fatalf("reserve ports: %v", err)
	}
	ms := &api.ManagedServer{Name: name, Port: ports[0], Ports: map[string]int{},
		URL: fmt.Sprintf("nats://%s:%d", c.host, ports[0])}
	for i, l := range listeners {
		ms.Ports[l] = ports[1+i]
	}
	cfg := serverConfig{
		env: templateEnv{ServerName: name, InstanceID: id, ServerDir: dir, StoreDir: filepath.Join(dir, "store"),
			ClientPort: ports[0], JetStream: js, Ports: ms.Ports, TLS: inst.tlsFiles},
		snippets:      co.snippets,
		tls:           inst.tls,
		advertiseHost: c.host,
	}
	path, err := cfg.write(dir)
	if err != nil {
		t.Fatalf("Request to tester.create.server failed: %v", err)
	}
	p := &process{name: name, dir: dir, config: path, ports: ports, logPath: filepath.Join(dir, "bus.log")}
	if err := p.start(); err != nil {
		t.Fatalf("Request to tester.create.server failed: %v", err)
	}
	ms.Running = true
	inst.Servers = []*api.ManagedServer{ms}
	inst.procs[name], inst.configs[name] = p, cfg
	return inst
}

// CreateCluster skips the test: bus has no clustering (routes), so a test
// of a cluster checks something bus does not offer.
func (c *Client) CreateCluster(t testing.TB, servers int, _ bool, _ ...CreateOption) *Instance {
	t.Helper()
	t.Skipf("bus has no clustering: the test needs a %d-server nats-server cluster", servers)
	return nil
}

// WaitForJetStream waits until $JS.API.INFO answers on nc, and fails the
// test after five seconds.
func (c *Client) WaitForJetStream(t testing.TB, nc *nats.Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := nc.Request("$JS.API.INFO", nil, time.Second)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jetstream did not become ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// RandomServer returns the instance's server (it has one).
func (i *Instance) RandomServer() *api.ManagedServer { return i.Servers[0] }

// Destroy stops the instance's servers and removes their files.
func (i *Instance) Destroy(t testing.TB) *api.DestroyResponse {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.destroyed {
		return &api.DestroyResponse{Destroyed: false}
	}
	i.destroyed = true
	for _, p := range i.procs {
		if err := p.stop(); err != nil {
			t.Errorf("destroy: %v", err)
		}
	}
	if os.Getenv("UPSTREAM_BUS_KEEP") == "" {
		if err := os.RemoveAll(i.root); err != nil {
			t.Errorf("destroy: %v", err)
		}
	}
	return &api.DestroyResponse{Destroyed: true}
}

// lookup finds a server of the instance or fails the test.
func (i *Instance) lookup(t testing.TB, server *api.ManagedServer) (*api.ManagedServer, *process) {
	t.Helper()
	if server == nil || server.Name == "" {
		t.Fatal("server is required")
	}
	for _, ms := range i.Servers {
		if ms.Name == server.Name {
			return ms, i.procs[ms.Name]
		}
	}
	t.Fatalf("Request failed: server %q not found", server.Name)
	return nil, nil
}

// StopServer shuts the server down, keeping its config and store.
func (i *Instance) StopServer(t testing.TB, server *api.ManagedServer) *api.StopServerResponse {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	ms, p := i.lookup(t, server)
	if !p.running() {
		t.Fatalf("Request failed: server %q is not running", ms.Name)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("Request failed: %v", err)
	}
	ms.Running = false
	return &api.StopServerResponse{Shutdown: true}
}

// StartServer starts a stopped server again from its config on disk, on
// the same ports and store.
func (i *Instance) StartServer(t testing.TB, server *api.ManagedServer) *api.StartServerResponse {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	ms, p := i.lookup(t, server)
	if err := p.start(); err != nil {
		t.Fatalf("Request failed: %v", err)
	}
	ms.Running = true
	return &api.StartServerResponse{Started: true}
}

// UpdateServer renders the server's config again from opts alone (what
// is not given goes back to the default) and writes it; ReloadServer or a
// restart applies it. The listeners cannot change.
func (i *Instance) UpdateServer(t testing.TB, server *api.ManagedServer, opts ...UpdateOption) *api.UpdateServerResponse {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	ms, p := i.lookup(t, server)
	uo := updateOptions{}
	for _, o := range opts {
		o.applyUpdate(&uo)
	}
	if err := checkSnippets(uo.snippets, i.jetStream, i.tls != nil); err != nil {
		t.Fatalf("Request failed: %v", err)
	}
	before, after := listenersOf(i.configs[ms.Name].snippets), listenersOf(uo.snippets)
	if !slices.Equal(before, after) {
		t.Fatalf("Request failed: the listeners of a server are fixed at create (%v), the update has %v", before, after)
	}
	cfg := i.configs[ms.Name]
	cfg.snippets = uo.snippets
	if uo.tlsTimeout != nil && cfg.tls != nil {
		settings := *cfg.tls
		settings.timeout = *uo.tlsTimeout
		cfg.tls = &settings
	}
	if _, err := cfg.write(p.dir); err != nil {
		t.Fatalf("Request failed: %v", err)
	}
	i.configs[ms.Name] = cfg
	return &api.UpdateServerResponse{Updated: true}
}

// ReloadServer has the running server read its config file again
// (SIGHUP, as an operator reloads bus) and waits until bus has applied it.
func (i *Instance) ReloadServer(t testing.TB, server *api.ManagedServer) *api.ReloadServerResponse {
	t.Helper()
	i.mu.Lock()
	defer i.mu.Unlock()
	_, p := i.lookup(t, server)
	if err := p.reload(); err != nil {
		t.Fatalf("Request failed: %v", err)
	}
	return &api.ReloadServerResponse{Reloaded: true}
}
