package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store_dir bus cannot use stops start-up with exit 2 and names the
// key, as every other configuration mistake does.
func TestUnusableStoreDirExitsTwo(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "not-a-dir", "x")
	cases := map[string]string{"under_a_file": filepath.Join(file, "data")}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		if err := os.Chmod(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(ro, 0o700) })
		cases["read_only"] = ro
	}
	for name, dir := range cases {
		p := runBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--store-dir", dir)
		if p.code != exitUsage || !strings.Contains(p.stderr.String(), "conf: store_dir: ") || !strings.Contains(p.stderr.String(), dir) {
			t.Errorf("%s: exit %d, want 2 naming store_dir and %s; stderr:\n%s", name, p.code, dir, p.stderr)
		}
	}
	// With JetStream off the directory is never used, so never checked.
	p := startBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--jetstream=false", "--store-dir", filepath.Join(file, "data"))
	if !p.waitForLog(t, "msg=serving") {
		t.Fatalf("without JetStream: exit %d; stderr:\n%s", p.code, p.stderr)
	}
}

// A second bus on the same store_dir is told another bus holds it.
func TestStoreDirHeldByAnotherBus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--store-dir", dir)
	if !first.waitForLog(t, "msg=serving") {
		t.Fatalf("first bus: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	second := runBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--store-dir", dir)
	if second.code != exitFailure || !strings.Contains(second.stderr.String(), "another bus process holds the store directory (store_dir)") {
		t.Errorf("second bus: exit %d; stderr:\n%s", second.code, second.stderr)
	}
}
