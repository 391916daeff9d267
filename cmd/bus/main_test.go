package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// busBin is the bus binary built once by TestMain; it is set before any test
// runs and only read afterwards.
var busBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bus-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "make temp dir:", err)
		os.Exit(1)
	}
	busBin = filepath.Join(dir, "bus")
	build := exec.Command("go", "build", "-o", busBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}
