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
		"subjects":         nil,
		"jetlog/vfs":       nil,
		"jetlog":           {"subjects", "jetlog/vfs"},
		"server/jetstream": {"jetlog", "jetlog/vfs", "subjects"},
		"server":           {"server/jetstream", "jetlog", "jetlog/vfs", "subjects"},
		"conf":             nil,
		"client":           nil,
	}
	mustUse := map[string][]string{
		"server":           {"server/jetstream"},
		"server/jetstream": {"jetlog"},
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
