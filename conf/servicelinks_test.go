package conf

import (
	"slices"
	"testing"
)

// A Kubernetes Service named "bus" puts link variables into every pod of
// its namespace; bus must start there with its defaults, and say which
// variables it ignored. Not parallel: it sets the environment.
func TestKubernetesServiceLinksAreIgnored(t *testing.T) {
	for k, v := range map[string]string{
		"BUS_PORT":                  "tcp://10.96.0.12:4222",
		"BUS_PORT_4222_TCP":         "tcp://10.96.0.12:4222",
		"BUS_PORT_4222_TCP_PROTO":   "tcp",
		"BUS_PORT_4222_TCP_PORT":    "4222",
		"BUS_PORT_4222_TCP_ADDR":    "10.96.0.12",
		"BUS_SERVICE_HOST":          "10.96.0.12",
		"BUS_SERVICE_PORT":          "4222",
		"BUS_SERVICE_PORT_MONITOR":  "8222",
		"BUS_PORT_8222_TCP_ADDR":    "10.96.0.12",
		"BUS_PORT_8222_UDP":         "udp://10.96.0.12:8222",
		"BUS_SERVICE_PORT_CLIENT_1": "4222",
	} {
		t.Setenv(k, v)
	}
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatalf("Load with Kubernetes service links: %v", err)
	}
	if cfg.Port != Default().Port {
		t.Fatalf("port %d, want the default %d", cfg.Port, Default().Port)
	}
	if got := IgnoredEnv(); len(got) != 11 || !slices.Contains(got, "BUS_PORT") {
		t.Fatalf("ignored %v", got)
	}
	// A real BUS_PORT still sets the port, and a misspelt variable is
	// still refused.
	t.Setenv("BUS_PORT", "5222")
	if cfg, err := Load("", nil); err != nil || cfg.Port != 5222 {
		t.Fatalf("BUS_PORT=5222: %v, port %d", err, cfg.Port)
	}
	t.Setenv("BUS_PROT", "5222")
	if _, err := Load("", nil); err == nil {
		t.Fatal("BUS_PROT accepted")
	}
}

// The link variables must change nothing at all: with BUS_PORT=tcp://…
// set, the --port flag still sets the port (it used to be dropped along
// with the variable), and a Service with another name starting "bus-"
// (bus-http gives BUS_HTTP_PORT=tcp://…, BUS_HTTP_SERVICE_HOST, …) is no
// more a setting than one named "bus". Not parallel: it sets the
// environment.
func TestKubernetesServiceLinksLeaveFlagsAlone(t *testing.T) {
	for k, v := range map[string]string{
		"BUS_PORT":                    "tcp://10.0.0.7:4222",
		"BUS_SERVICE_PORT":            "4222",
		"BUS_SERVICE_HOST":            "10.0.0.7",
		"BUS_PORT_4222_TCP":           "tcp://10.0.0.7:4222",
		"BUS_HTTP_PORT":               "tcp://10.0.0.8:8222",
		"BUS_HTTP_SERVICE_HOST":       "10.0.0.8",
		"BUS_HTTP_SERVICE_PORT":       "8222",
		"BUS_HTTP_PORT_8222_TCP_PORT": "8222",
		"BUS_HTTPS_PORT":              "tcp://10.0.0.9:8443",
	} {
		t.Setenv(k, v)
	}
	cfg, err := Load("", parseFlags(t, "--port", "5222", "--http-port", "9222"))
	if err != nil {
		t.Fatalf("Load with Kubernetes service links: %v", err)
	}
	if cfg.Port != 5222 || cfg.HTTPPort != 9222 {
		t.Fatalf("port %d, http_port %d; want the flags' 5222 and 9222", cfg.Port, cfg.HTTPPort)
	}
	cfg, err = Load("", nil)
	if err != nil {
		t.Fatalf("Load with Kubernetes service links: %v", err)
	}
	if cfg != Default() {
		t.Fatalf("the link variables changed the config:\n%+v\nwant the defaults", cfg)
	}
	if got := IgnoredEnv(); !slices.Contains(got, "BUS_HTTP_PORT") || !slices.Contains(got, "BUS_HTTP_SERVICE_HOST") {
		t.Fatalf("ignored %v", got)
	}
}
