package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The files under deploy/ are checked as far as a machine without docker,
// systemd or a cluster allows: each is parsed, and the commands it would
// run (the image's CMD and HEALTHCHECK, the unit's ExecStart and
// ExecReload, the manifest's args, probes and preStop hook) run against
// the real bus binary, with the paths moved into temp dirs and the ports
// picked free through BUS_PORT and BUS_HTTP_PORT.

// deployProc is a bus process started from a deploy file's command line.
type deployProc struct {
	cmd       *exec.Cmd
	mu        sync.Mutex
	log       strings.Builder // guarded by mu
	addrs     chan []string   // client and monitoring addresses, once serving
	exited    chan struct{}   // closed when the process has exited
	exitCode  int
	exitError error
}

func startDeployProc(t *testing.T, argv []string, env ...string) *deployProc {
	t.Helper()
	p := &deployProc{cmd: exec.Command(argv[0], argv[1:]...), addrs: make(chan []string, 1), exited: make(chan struct{})}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BUS_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, append([]string{"BUS_PORT=-1", "BUS_HTTP_PORT=-1"}, env...)...)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			// Logged before it is signalled: a waiter reads the log with
			// its serving line in it.
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := servingAddrs.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case p.addrs <- m[1:]:
				default:
				}
			}
		}
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.exitCode = ee.ExitCode()
		} else {
			p.exitError = err
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *deployProc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// serving waits for the serving line and returns the client and
// monitoring addresses.
func (p *deployProc) serving(t *testing.T) (client, monitoring string) {
	t.Helper()
	select {
	case a := <-p.addrs:
		return a[0], a[1]
	case <-p.exited:
	case <-time.After(20 * time.Second):
	}
	t.Fatalf("%q did not serve; log:\n%s", p.cmd.Args, p.logText())
	return "", ""
}

// wait returns the exit code, failing if the process runs past d.
func (p *deployProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		if p.exitError != nil {
			t.Fatalf("%q: %v", p.cmd.Args, p.exitError)
		}
		return p.exitCode
	case <-time.After(d):
		t.Fatalf("%q still running after %v; log:\n%s", p.cmd.Args, d, p.logText())
		return 0
	}
}

// waitLog polls the log for text.
func (p *deployProc) waitLog(t *testing.T, text string) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool { return strings.Contains(p.logText(), text) }) {
		t.Fatalf("no %q in the log:\n%s", text, p.logText())
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func readDeployFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replacer turns a deploy file's installed paths into the test's.
func replacer(t *testing.T, bin string, pairs ...string) *strings.Replacer {
	t.Helper()
	return strings.NewReplacer(append([]string{"/usr/local/bin/bus", bin}, pairs...)...)
}

// dockerfile is the instructions of the last stage (the image), with
// continuation lines joined.
func dockerfile(t *testing.T) (instr map[string][]string, stages []string) {
	t.Helper()
	text := strings.ReplaceAll(readDeployFile(t, "Dockerfile"), "\\\n", " ")
	instr = map[string][]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, rest, _ := strings.Cut(line, " ")
		op = strings.ToUpper(op)
		if op == "FROM" {
			stages = append(stages, rest)
			instr = map[string][]string{}
		}
		instr[op] = append(instr[op], strings.TrimSpace(rest))
	}
	return instr, stages
}

func jsonArgs(t *testing.T, op, s string) []string {
	t.Helper()
	var args []string
	if err := json.Unmarshal([]byte(s), &args); err != nil {
		t.Fatalf("%s %s is not the exec (JSON) form: %v", op, s, err)
	}
	return args
}

func TestDeployDockerfile(t *testing.T) {
	t.Parallel()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	instr, stages := dockerfile(t)
	if len(stages) < 2 || !strings.Contains(stages[0], "golang:"+goMinor(t)) {
		t.Errorf("stages %q: want a golang:%s build stage, then the image", stages, goMinor(t))
	}
	if u := instr["USER"]; len(u) != 1 || strings.HasPrefix(u[0], "root") || strings.HasPrefix(u[0], "0") {
		t.Errorf("USER %q: the image must not run as root", u)
	}
	if v := instr["VOLUME"]; len(v) != 1 || v[0] != "/data" {
		t.Errorf("VOLUME %q, want /data", v)
	}
	hc := instr["HEALTHCHECK"]
	if len(hc) != 1 || !strings.Contains(hc[0], "CMD ") {
		t.Fatalf("HEALTHCHECK %q", hc)
	}
	_, check, _ := strings.Cut(hc[0], "CMD ")
	if !strings.Contains(check, ":8222/healthz") {
		t.Errorf("HEALTHCHECK %q does not ask /healthz on the monitoring port", check)
	}
	entry := jsonArgs(t, "ENTRYPOINT", instr["ENTRYPOINT"][0])
	argv := append(entry, jsonArgs(t, "CMD", instr["CMD"][0])...)
	if !strings.Contains(instr["COPY"][0], entry[0]) {
		t.Errorf("COPY %q does not put the binary at the ENTRYPOINT %s", instr["COPY"], entry[0])
	}

	data := t.TempDir()
	r := replacer(t, bin, "/data", data)
	for i := range argv {
		argv[i] = r.Replace(argv[i])
	}
	p := startDeployProc(t, argv)
	_, mon := p.serving(t)
	_, port, err := net.SplitHostPort(mon)
	if err != nil {
		t.Fatal(err)
	}
	// The health check, as docker runs its shell form.
	sh := strings.ReplaceAll(check, ":8222/", ":"+port+"/")
	if out, err := exec.Command("/bin/sh", "-c", sh).CombinedOutput(); err != nil {
		t.Errorf("HEALTHCHECK %q against a serving bus: %v\n%s", sh, err, out)
	}
	if entries, _ := os.ReadDir(data); len(entries) == 0 {
		t.Errorf("nothing stored in the /data volume (%s)", data)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM) // docker stop
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Errorf("docker stop's SIGTERM: exit %d, want 0", code)
	}
	if err := exec.Command("/bin/sh", "-c", sh).Run(); err == nil {
		t.Errorf("HEALTHCHECK %q passes with no bus running", sh)
	}
}

// goMinor is go.mod's go version as an image tag: "1.26".
func goMinor(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no go line in go.mod")
	}
	return string(m[1])
}

// unitValues is the [Service] section's settings.
func unitValues(t *testing.T) map[string]string {
	t.Helper()
	v := map[string]string{}
	section := ""
	for _, line := range strings.Split(readDeployFile(t, "systemd/bus.service"), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[Service]":
			k, val, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("unit line %q", line)
			}
			v[k] = val
		}
	}
	return v
}

func TestDeploySystemdUnit(t *testing.T) {
	t.Parallel()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	unit := unitValues(t)
	if unit["DynamicUser"] != "yes" && unit["User"] == "" {
		t.Errorf("the unit runs as root (no User= or DynamicUser=)")
	}
	etc, state, run := t.TempDir(), t.TempDir(), t.TempDir()
	// The unit's install steps put conf/bus.example.yaml at /etc/bus/bus.yaml.
	example, err := os.ReadFile("../conf/bus.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "bus.yaml"), example, 0o600); err != nil {
		t.Fatal(err)
	}
	r := replacer(t, bin, "/etc/bus", etc, "/var/lib/bus", state, "/run/bus", run)
	argv := strings.Fields(r.Replace(unit["ExecStart"]))
	p := startDeployProc(t, argv)
	client, _ := p.serving(t)
	connect(t, "nats://"+client).Close()

	pid, err := os.ReadFile(filepath.Join(run, "bus.pid"))
	if err != nil || strings.TrimSpace(string(pid)) != strconv.Itoa(p.cmd.Process.Pid) {
		t.Errorf("pid file %q (%v), want %d", pid, err, p.cmd.Process.Pid)
	}
	reload := strings.ReplaceAll(unit["ExecReload"], "$MAINPID", strconv.Itoa(p.cmd.Process.Pid))
	if out, err := exec.Command("/bin/sh", "-c", reload).CombinedOutput(); err != nil {
		t.Fatalf("ExecReload %q: %v\n%s", reload, err, out)
	}
	p.waitLog(t, "config reloaded")
	if unit["KillSignal"] != "SIGTERM" {
		t.Fatalf("KillSignal=%s", unit["KillSignal"])
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	stop, err := time.ParseDuration(unit["TimeoutStopSec"] + "s")
	if err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, stop); code != 0 {
		t.Errorf("systemctl stop: exit %d, want 0", code)
	}

	// A broken config exits 2, which RestartPreventExitStatus names, so
	// systemd does not restart it in a loop.
	if err := os.WriteFile(filepath.Join(etc, "bus.yaml"), []byte("prot: 4222\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := startDeployProc(t, argv)
	if code := bad.wait(t, 15*time.Second); strconv.Itoa(code) != unit["RestartPreventExitStatus"] {
		t.Errorf("bad config: exit %d, RestartPreventExitStatus=%s", code, unit["RestartPreventExitStatus"])
	}
}

// k8sContainer is the part of the StatefulSet the test runs.
type k8sContainer struct {
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
	StartupProbe   *k8sProbe `yaml:"startupProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	Lifecycle      struct {
		PreStop struct {
			Exec struct {
				Command []string `yaml:"command"`
			} `yaml:"exec"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type k8sDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Replicas int `yaml:"replicas"`
		Template struct {
			Spec struct {
				EnableServiceLinks            *bool `yaml:"enableServiceLinks"`
				TerminationGracePeriodSeconds int   `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               struct {
					RunAsNonRoot bool `yaml:"runAsNonRoot"`
					RunAsUser    int  `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func TestDeployKubernetesStatefulSet(t *testing.T) {
	t.Parallel()
	bin, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(readDeployFile(t, "kubernetes/bus.yaml")))
	var set *k8sDoc
	for {
		var d k8sDoc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if d.Kind == "StatefulSet" {
			set = &d
		}
	}
	if set == nil || len(set.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("no StatefulSet with one container")
	}
	pod := set.Spec.Template.Spec
	c := pod.Containers[0]
	if set.Spec.Replicas != 1 {
		t.Errorf("replicas %d: bus is one server", set.Spec.Replicas)
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Errorf("enableServiceLinks is not false")
	}
	instr, _ := dockerfile(t)
	if !pod.SecurityContext.RunAsNonRoot || !strings.HasPrefix(instr["USER"][0], strconv.Itoa(pod.SecurityContext.RunAsUser)+":") {
		t.Errorf("securityContext %+v does not match the image's USER %q", pod.SecurityContext, instr["USER"])
	}
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["client"] != 4222 || ports["monitor"] != 8222 {
		t.Errorf("container ports %v, want bus's defaults client 4222, monitor 8222", ports)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/data" {
		t.Errorf("volume mounts %+v, want the image's /data", c.VolumeMounts)
	}

	data := t.TempDir()
	entry := jsonArgs(t, "ENTRYPOINT", instr["ENTRYPOINT"][0])
	argv := []string{bin}
	for _, a := range c.Args {
		argv = append(argv, strings.ReplaceAll(a, "/data", data))
	}
	p := startDeployProc(t, argv)
	_, mon := p.serving(t)
	for name, probe := range map[string]*k8sProbe{"startupProbe": c.StartupProbe, "livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
		if probe == nil {
			t.Errorf("no %s", name)
			continue
		}
		if probe.HTTPGet.Port != "monitor" {
			t.Errorf("%s port %q, want monitor", name, probe.HTTPGet.Port)
		}
		if code := httpStatus(t, "http://"+mon+probe.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("%s %s: %d", name, probe.HTTPGet.Path, code)
		}
	}

	// preStop: bus is PID 1 in the image (its ENTRYPOINT); here it is
	// the process started above.
	pre := c.Lifecycle.PreStop.Exec.Command
	if len(pre) == 0 || pre[0] != entry[0] || pre[len(pre)-1] != "1" {
		t.Fatalf("preStop %q, want the image's %s ldm --pid 1", pre, entry[0])
	}
	pre = append([]string{bin}, pre[1:len(pre)-1]...)
	pre = append(pre, strconv.Itoa(p.cmd.Process.Pid))
	if out, err := exec.Command(pre[0], pre[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("preStop %q: %v\n%s", pre, err, out)
	}
	grace := time.Duration(pod.TerminationGracePeriodSeconds) * time.Second
	if code := p.wait(t, grace); code != 0 {
		t.Errorf("after preStop: exit %d, want 0", code)
	}
	p.waitLog(t, "lame duck")
}
