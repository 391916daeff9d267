package main

import (
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Under a Kubernetes Service named "bus" every pod gets BUS_PORT=tcp://…,
// BUS_SERVICE_PORT=4222 and the like. They must change nothing: --port
// is honoured and nothing is logged about them at the default level.
func TestServeHonoursPortUnderKubernetesServiceLinks(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"BUS_PORT=tcp://10.0.0.7:4222", "BUS_SERVICE_PORT=4222", "BUS_SERVICE_HOST=10.0.0.7",
		"BUS_PORT_4222_TCP=tcp://10.0.0.7:4222", "BUS_PORT_4222_TCP_PROTO=tcp",
		"BUS_PORT_4222_TCP_PORT=4222", "BUS_PORT_4222_TCP_ADDR=10.0.0.7",
	}
	p := startBus(t, env, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--http-port", "0", "--store-dir", t.TempDir())
	p.waitServing(t)
	if m := clientAddrRE.FindStringSubmatch(p.stderr.String()); m == nil || m[1] != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("serving on %v, want --port %d; stderr:\n%s", m, port, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "BUS_") {
		t.Errorf("the link variables were logged at the default level:\n%s", p.stderr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
}
