package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	readyTimeout = 15 * time.Second // from exec to accepting clients
	stopTimeout  = 15 * time.Second // from SIGTERM to exit, then SIGKILL
	pollEvery    = 10 * time.Millisecond
)

// flavor is one of the servers under comparison.
type flavor struct {
	name string // "nats-server", "bus" or "mosquitto", as printed in the tables
	// argv returns the command line for a server on loopback at port, with
	// monitoring at httpPort and its store in dir; JetStream is on only
	// for the JetStream scenarios, in both servers alike.
	argv func(port, httpPort int, dir string, jetstream bool) []string
	// mqttOnly marks a broker that speaks MQTT and nothing else
	// (mosquitto): it runs the MQTT scenarios only, from a config file of
	// its own that mqttOnlyConfig writes, and is ready once it answers an
	// MQTT CONNECT.
	mqttOnly bool
}

func referenceFlavor(t tools) flavor {
	return flavor{name: "nats-server", argv: func(port, httpPort int, dir string, jetstream bool) []string {
		argv := []string{t.natsServer, "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-m", strconv.Itoa(httpPort)}
		if jetstream {
			argv = append(argv, "-js", "-sd", dir)
		}
		return argv
	}}
}

func busFlavor(t tools) flavor {
	return flavor{name: "bus", argv: func(port, httpPort int, dir string, jetstream bool) []string {
		return []string{t.bus, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--http-port", strconv.Itoa(httpPort), "--store-dir", dir, "--log-level", "warn",
			"--jetstream=" + strconv.FormatBool(jetstream)}
	}}
}

// server is one running server process, started fresh for one run.
type server struct {
	cmd       *exec.Cmd
	addr      string // host:port for clients
	url       string // nats://host:port
	wsURL     string // ws://host:port of the websocket listener, "" without one
	mqttAddr  string // host:port of the MQTT listener, "" without one
	httpURL   string // http://host:port of the monitoring endpoint
	jetstream bool   // the INFO it sent advertised JetStream
	logPath   string
	done      chan struct{} // closed when the process has exited
	waitErr   error         // set before done is closed
}

// listeners are the listeners besides the client port that a scenario
// needs, in both NATS flavors alike.
type listeners struct {
	websocket bool // a plain websocket listener that offers compression
	mqtt      bool // an MQTT listener (nats-server's needs JetStream and a server name)
	accounts  int  // an accounts block of this many accounts besides the importer (accounts.go); 0 for none
}

// startServer starts f on free loopback ports with a store under dir and
// returns once it has sent INFO to a client and answers /varz (an
// MQTT-only broker: once it answers an MQTT CONNECT). With extra
// listeners, the NATS flavors also read a config file (nats-server's
// syntax, which bus reads too) that declares them.
func startServer(ctx context.Context, f flavor, dir string, jetstream bool, extra listeners) (*server, error) {
	if f.mqttOnly {
		return startMQTTOnly(ctx, f, dir)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	store := filepath.Join(dir, "store")
	if err := os.MkdirAll(store, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child holds its own descriptor
	argv := f.argv(port, httpPort, store, jetstream)
	var wsPort, mqttPort int
	var conf strings.Builder
	if extra.websocket {
		if wsPort, err = freePort(); err != nil {
			return nil, err
		}
		fmt.Fprintf(&conf, "websocket {\n  host: \"127.0.0.1\"\n  port: %d\n  no_tls: true\n  compression: true\n}\n", wsPort)
	}
	if extra.mqtt {
		if mqttPort, err = freePort(); err != nil {
			return nil, err
		}
		fmt.Fprintf(&conf, "server_name: bench\nmqtt {\n  host: \"127.0.0.1\"\n  port: %d\n}\n", mqttPort)
	}
	if extra.accounts > 0 {
		conf.WriteString(accountsBlock(extra.accounts))
	}
	if conf.Len() > 0 {
		path := filepath.Join(dir, "listeners.conf")
		if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
			return nil, err
		}
		argv = append(argv, "-c", path)
	}
	s, err := launch(f, argv, logPath, logFile)
	if err != nil {
		return nil, err
	}
	s.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.httpURL = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
	s.url = "nats://" + s.addr
	if wsPort != 0 {
		s.wsURL = "ws://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(wsPort))
	}
	if mqttPort != 0 {
		s.mqttAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(mqttPort))
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.stop()
		return nil, fmt.Errorf("%s not ready: %w\n%s", f.name, err, s.logTail())
	}
	return s, nil
}

// launch starts argv with its output in logFile and a goroutine that
// records its exit.
func launch(f flavor, argv []string, logPath string, logFile *os.File) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", f.name, err)
	}
	s := &server{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// waitReady polls until the server sends INFO on a fresh connection and
// serves /varz, or the process exits, or readyTimeout passes.
func (s *server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		info, err := s.readInfo(ctx)
		if err == nil {
			s.jetstream = info.JetStream
			if _, err = s.subscriptions(ctx); err == nil {
				select {
				case <-s.done: // someone else answered on our port
					return fmt.Errorf("exited: %v", s.waitErr)
				default:
					return nil
				}
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("exited: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(pollEvery):
		}
	}
}

type infoDoc struct {
	JetStream bool `json:"jetstream"`
}

func (s *server) readInfo(ctx context.Context) (infoDoc, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return infoDoc{}, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return infoDoc{}, err
	}
	body, ok := strings.CutPrefix(line, "INFO ")
	if !ok {
		return infoDoc{}, fmt.Errorf("first line is not INFO: %q", line)
	}
	var info infoDoc
	if err := json.Unmarshal([]byte(body), &info); err != nil {
		return infoDoc{}, fmt.Errorf("INFO: %w", err)
	}
	return info, nil
}

// subscriptions is the server's subscription count from /varz. The
// reference counts its own system subscriptions too, so callers compare
// against a count taken before their clients subscribed.
func (s *server) subscriptions(ctx context.Context) (int, error) {
	var v struct {
		Subscriptions int `json:"subscriptions"`
	}
	err := getMonitor(ctx, s.httpURL, "/varz", func(body io.Reader) error { return json.NewDecoder(body).Decode(&v) })
	return v.Subscriptions, err
}

// getMonitor GETs path of the monitoring endpoint at httpURL, within 5 s
// of ctx, and hands a 200 answer's body to read.
func getMonitor(ctx context.Context, httpURL, path string, read func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, httpURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	if err := read(resp.Body); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// waitSubscriptions polls /varz until the server counts at least n
// subscriptions: the way to know a background `nats bench sub` is ready.
func (s *server) waitSubscriptions(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		got, err := s.subscriptions(ctx)
		if err == nil && got >= n {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("server exited: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d subscriptions (have %d, %v): %w", n, got, err, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// rss is the server's resident set size in bytes.
func (s *server) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

// stop sends SIGTERM and waits for the exit, then SIGKILLs the process
// group if it takes longer than stopTimeout. It is safe to call twice.
func (s *server) stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		var exit *exec.ExitError
		if errors.As(s.waitErr, &exit) && !exit.Exited() {
			return nil // ended by our signal
		}
		return s.waitErr
	case <-time.After(stopTimeout):
		_ = signalGroup(s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
		return fmt.Errorf("did not stop within %v of SIGTERM; killed", stopTimeout)
	}
}

func (s *server) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	return lastLines(string(b), 10)
}

// freePort asks the kernel for an unused loopback port. Another process
// could take it before the server binds; startServer then fails and the
// run is reported as failed rather than measuring the wrong thing.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
