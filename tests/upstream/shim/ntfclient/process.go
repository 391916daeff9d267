package ntf

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// busBinaryEnv names the variable that holds the path of the bus binary the
// shim runs; tests/upstream/run.sh builds it from the checkout.
const busBinaryEnv = "UPSTREAM_BUS_BIN"

// How long a bus process gets to open its ports, to stop, and to apply a
// reload. Generous: the machine is shared.
const (
	startTimeout  = 20 * time.Second
	stopTimeout   = 15 * time.Second
	reloadTimeout = 10 * time.Second
	pollEvery     = 10 * time.Millisecond
)

// process is one bus server run as `bus serve -c server.conf`: the
// configuration goes through bus's own loader, exactly as an operator's
// file does, and a stop and start is a real restart on the same store.
type process struct {
	name    string
	dir     string
	config  string // path of server.conf
	ports   []int  // the client port first, then the listeners'
	logPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

func busBinary() (string, error) {
	bin := os.Getenv(busBinaryEnv)
	if bin == "" {
		return "", fmt.Errorf("%s is not set: run nats.go's tests through tests/upstream/run.sh, which builds bus", busBinaryEnv)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("%s: %w", busBinaryEnv, err)
	}
	return bin, nil
}

// start runs the process and returns once every port accepts connections,
// or with the log's tail when bus exits or does not listen in time.
func (p *process) start() error {
	if p.running() {
		return fmt.Errorf("server %s is already running", p.name)
	}
	bin, err := busBinary()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "-c", p.config)
	cmd.Dir = p.dir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start bus: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // an exit status is reported through the log
		logFile.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited

	deadline := time.Now().Add(startTimeout)
	for _, port := range p.ports {
		for !accepts(port) {
			select {
			case <-exited:
				return fmt.Errorf("bus %s exited during start:\n%s", p.name, p.logTail())
			default:
			}
			if time.Now().After(deadline) {
				_ = p.stop()
				return fmt.Errorf("bus %s did not listen on port %d within %v:\n%s", p.name, port, startTimeout, p.logTail())
			}
			time.Sleep(pollEvery)
		}
	}
	return nil
}

// childEnv is this process's environment without BUS_* variables: bus
// reads those as settings, and the server's settings are its config file.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUS_") {
			env = append(env, kv)
		}
	}
	return env
}

func accepts(port int) bool {
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (p *process) running() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks bus to shut down (SIGTERM, its graceful path) and kills it if
// it has not gone within stopTimeout.
func (p *process) stop() error {
	if !p.running() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopTimeout):
	}
	// SIGQUIT has the Go runtime write every goroutine's stack to the log
	// and exit: the stacks say where the shutdown is stuck.
	_ = p.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return fmt.Errorf("bus %s did not stop within %v after SIGTERM; its goroutines are in %s:\n%s", p.name, stopTimeout, p.logPath, p.logTail())
}

// Log lines bus writes when a SIGHUP's reload is done, one way or the other.
var (
	reloadedLine     = []byte("config reloaded")
	reloadFailedLine = []byte("config reload failed")
)

// reload sends SIGHUP and waits for bus to log the outcome.
func (p *process) reload() error {
	if !p.running() {
		return fmt.Errorf("server %s is not running", p.name)
	}
	okBefore, failedBefore := p.countLog(reloadedLine), p.countLog(reloadFailedLine)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return err
	}
	deadline := time.Now().Add(reloadTimeout)
	for time.Now().Before(deadline) {
		if p.countLog(reloadFailedLine) > failedBefore {
			return fmt.Errorf("bus %s refused the reload:\n%s", p.name, p.logTail())
		}
		if p.countLog(reloadedLine) > okBefore {
			return nil
		}
		time.Sleep(pollEvery)
	}
	return fmt.Errorf("bus %s did not finish the reload within %v:\n%s", p.name, reloadTimeout, p.logTail())
}

func (p *process) countLog(line []byte) int {
	data, _ := os.ReadFile(p.logPath) // a log not yet written counts nothing
	return bytes.Count(data, line)
}

// logTail is the end of the process's log, for failure messages.
func (p *process) logTail() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	const max = 4000
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return string(data)
}

// freePorts reserves n distinct free TCP ports. They are released before
// bus binds them; start reports a port taken in between.
func freePorts(n int) ([]int, error) {
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func newServerDir(root, name string) (string, error) {
	dir := filepath.Join(root, name)
	return dir, os.MkdirAll(filepath.Join(dir, "store"), 0o755)
}
