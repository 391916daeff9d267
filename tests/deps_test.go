package tests

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackageDependencies enforces the one-way package rules of STYLE §1:
// for each package, the packages of this module it may depend on
// (directly or not). Anything else of ours in its `go list -deps` fails.
func TestPackageDependencies(t *testing.T) {
	t.Parallel()
	const mod = "github.com/bus-dev/bus/"
	allowed := map[string][]string{
		"subjects": nil,
		// header reads NATS header blocks for the storage, JetStream and
		// the dashboard alike.
		"header":           nil,
		"jetlog/vfs":       nil,
		"jetlog":           {"header", "subjects", "jetlog/vfs"},
		"snapshot":         {"subjects"},
		"server/jetstream": {"header", "jetlog", "jetlog/vfs", "snapshot", "subjects"},
		"server":           {"header", "server/jetstream", "server/monitor", "server/mqtt", "jetlog", "jetlog/vfs", "snapshot", "subjects"},
		// The MQTT codec and topic mapping know nothing of the server;
		// subjects for the subject rules a mapped topic must meet.
		"server/mqtt": {"subjects"},
		// The monitoring front end reads through monitor.Source only:
		// nothing of the core, of JetStream or of the storage; subjects
		// for the name and subject rules it checks before asking, header
		// for the headers of the messages it shows.
		"server/monitor":     {"header", "subjects"},
		"conf":               nil,
		"client":             nil,
		"client/prom":        {"client"},
		"examples/checkout":  {"client"},
		"examples/flashsale": {"client"},
		"examples/rpc":       {"client"},
	}
	mustUse := map[string][]string{
		"server":           {"server/jetstream", "server/monitor"},
		"server/jetstream": {"jetlog"},
		"jetlog":           {"subjects"},
	}
	for pkg, ok := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		// The edges the layout is built on must be there, so that a
		// broken go list cannot pass this test by listing nothing.
		for _, want := range mustUse[pkg] {
			if !slices.Contains(deps, mod+want) {
				t.Errorf("%s no longer depends on %s: is go list working?", pkg, want)
			}
		}
		for _, dep := range deps {
			ours, isOurs := strings.CutPrefix(dep, mod)
			if !isOurs || ours == pkg {
				continue
			}
			if !slices.Contains(ok, ours) {
				t.Errorf("%s depends on %s; allowed: %v", pkg, ours, ok)
			}
		}
	}
}

// TestClientImports pins what the client packages import from outside
// the standard library (STYLE §1): they must stay light for users.
func TestClientImports(t *testing.T) {
	t.Parallel()
	const mod = "github.com/bus-dev/bus/"
	external := map[string][]string{
		"client":      {"github.com/nats-io/nats.go", "github.com/nats-io/nats.go/jetstream", "github.com/vmihailenco/msgpack/v5"},
		"client/prom": {"github.com/prometheus/client_golang/prometheus", mod + "client"},
	}
	for pkg, ok := range external {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			first, _, _ := strings.Cut(imp, "/")
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			if !slices.Contains(ok, imp) {
				t.Errorf("%s imports %s; allowed: %v", pkg, imp, ok)
			}
		}
	}
}

// TestPrometheusModuleOnlyInTests keeps github.com/prometheus/prometheus
// (its rule parser and PromQL engine check docs/alerts/bus.rules.yml) out
// of the binary: the server's /metrics needs client_golang alone.
func TestPrometheusModuleOnlyInTests(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/bus-dev/bus/cmd/bus").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/prometheus/client_golang/prometheus") {
		t.Error("cmd/bus no longer links client_golang: is go list working?")
	}
	for _, dep := range deps {
		if strings.HasPrefix(dep, "github.com/prometheus/prometheus/") {
			t.Errorf("cmd/bus links %s", dep)
		}
	}
}

// TestPrometheusOnlyInMonitor keeps Prometheus's libraries out of the
// core (STYLE §1): of the server's packages, only the monitoring front
// end, server/monitor, imports them.
func TestPrometheusOnlyInMonitor(t *testing.T) {
	t.Parallel()
	const mod = "github.com/bus-dev/bus/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, mod+"server/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	monitorUses := false
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, "github.com/prometheus/") {
				continue
			}
			if pkg == mod+"server/monitor" {
				monitorUses = true
				continue
			}
			t.Errorf("%s imports %s: only server/monitor may", pkg, imp)
		}
	}
	if !monitorUses {
		t.Error("server/monitor no longer imports Prometheus: is go list working?")
	}
}
