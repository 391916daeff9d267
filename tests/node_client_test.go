package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// nodeScript runs tests/node/<script> with the official NATS JavaScript
// client against url. It skips when node or the npm packages are not
// installed (.ci/run installs them and sets REQUIRE_NODE_TESTS=1, which
// makes a missing one a failure).
func nodeScript(t *testing.T, script, url string) {
	t.Helper()
	node := nodeInstalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Dir = "node"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node %s against %s: %v\n%s", script, url, err, out)
	}
	t.Logf("%s", out)
}

// nodeInstalled is node's path, once node and tests/node's npm packages
// are there; it skips the test otherwise, or fails it with
// REQUIRE_NODE_TESTS=1.
func nodeInstalled(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	modules := filepath.Join("node", "node_modules")
	if _, serr := os.Stat(modules); err != nil || serr != nil {
		if os.Getenv("REQUIRE_NODE_TESTS") == "1" {
			t.Fatalf("node (%v) or %s (%v) missing", err, modules, serr)
		}
		t.Skip("node or tests/node/node_modules missing: cd tests/node && npm ci")
	}
	return node
}

// TestNodeClientKeyValueAndObjectStore: the JavaScript client's
// JetStream, KV and object store against bus, and the same script
// against the reference (so the script's expectations are the
// reference's).
func TestNodeClientKeyValueAndObjectStore(t *testing.T) {
	t.Parallel()
	nodeScript(t, "kv_obj.mjs", "nats://"+refAddr(startReference(t, true)))
	nodeScript(t, "kv_obj.mjs", busURL(startBus(t, server.Options{JetStream: true})))
}
