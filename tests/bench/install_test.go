package main

import (
	"os"
	"strings"
	"testing"
)

// TestReferenceIsTheGoModRelease pins the reference server the suite
// installs to the nats-server release in go.mod, which the differential
// tests in tests/ embed: both compare bus against the same reference.
func TestReferenceIsTheGoModRelease(t *testing.T) {
	t.Parallel()
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var inGoMod string
	for _, l := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == natsServerPkg {
			inGoMod = f[1]
		}
	}
	if inGoMod != natsServerVersion {
		t.Errorf("go.mod requires %s %q, the suite installs %q: change natsServerVersion with go.mod", natsServerPkg, inGoMod, natsServerVersion)
	}
}
