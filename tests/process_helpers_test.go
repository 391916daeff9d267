package tests

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// busBinary builds cmd/bus once per test run.
var busBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "bus")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/bus-dev/bus/cmd/bus").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

var servingLine = regexp.MustCompile(`msg=serving client=(\S+)`)

// startBusProcess runs the bus binary on a free port with storeDir (and
// extra arguments) and returns the process and its client URL.
func startBusProcess(t *testing.T, storeDir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"serve", "--host", "127.0.0.1", "--port", "0", "--http-port", "0", "--store-dir", storeDir}, extra...)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, "nats://" + a
	case <-time.After(20 * time.Second):
		t.Fatal("bus did not start")
	}
	return nil, ""
}
