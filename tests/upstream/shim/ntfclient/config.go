package ntf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// snippetKeys are the config slots a test may fill, in the order they are
// written; listenerKeys are those that get a reserved port of their own.
var (
	snippetKeys  = []string{"top", "jetstream", "tls", "websocket", "mqtt", "leafnode", "system_account", "authorization", "accounts"}
	listenerKeys = []string{"websocket", "mqtt", "leafnode"}
)

// templateEnv is what a snippet's text/template sees: the names the
// tester offers (.Ports.websocket, .TLS.CertFile, .StoreDir …).
type templateEnv struct {
	ServerName string
	InstanceID string
	ServerDir  string
	StoreDir   string
	ClientPort int
	JetStream  bool
	Ports      map[string]int
	TLS        *tlsFiles
}

// tlsFiles are the generated certificate files of an instance.
type tlsFiles struct {
	CAFile, CertFile, KeyFile string
}

// serverConfig is everything one server's config file is rendered from.
type serverConfig struct {
	env           templateEnv
	snippets      map[string]string
	tls           *tlsSettings // generated TLS on the client port; nil: none
	advertiseHost string
}

// tlsSettings are the generated TLS's choices for the client port.
type tlsSettings struct {
	mutual         bool
	handshakeFirst bool
	timeout        float64 // seconds
}

// checkSnippets refuses what the tester refuses: unknown slots, a
// jetstream slot without JetStream, and two tls blocks.
func checkSnippets(snippets map[string]string, jetStream, generatedTLS bool) error {
	for k := range snippets {
		if !slices.Contains(snippetKeys, k) {
			return fmt.Errorf("unknown snippet key %q (allowed: %s)", k, strings.Join(snippetKeys, ", "))
		}
	}
	if _, ok := snippets["jetstream"]; ok && !jetStream {
		return fmt.Errorf("jetstream snippet requires JetStream to be enabled on the instance")
	}
	if _, ok := snippets["tls"]; ok && generatedTLS {
		return fmt.Errorf("WithTLSSnippet and WithGeneratedTLS cannot be combined")
	}
	return nil
}

// listenersOf lists the port-bearing slots that snippets fill.
func listenersOf(snippets map[string]string) []string {
	var out []string
	for _, k := range listenerKeys {
		if _, ok := snippets[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// write renders each snippet into its own file under dir/snippets and the
// main config at dir/server.conf, which includes them, and returns the
// main config's path. The main config is nats-server's syntax, which bus's
// loader reads as nats-server would.
func (c serverConfig) write(dir string) (string, error) {
	snippetDir := filepath.Join(dir, "snippets")
	if err := os.MkdirAll(snippetDir, 0o755); err != nil {
		return "", err
	}
	includes := map[string]string{}
	for _, key := range snippetKeys {
		body, ok := c.snippets[key]
		if !ok {
			continue
		}
		tmpl, err := template.New(key).Option("missingkey=error").Parse(body)
		if err != nil {
			return "", fmt.Errorf("snippet %q: %w", key, err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&out, c.env); err != nil {
			return "", fmt.Errorf("snippet %q: %w", key, err)
		}
		path := filepath.Join(snippetDir, key+".conf")
		if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
			return "", err
		}
		// Relative to server.conf: bus, like nats-server, resolves an
		// include against the including file's folder, absolute or not.
		includes[key] = filepath.Join("snippets", key+".conf")
	}

	var b strings.Builder
	include := func(key string) bool {
		if path, ok := includes[key]; ok {
			fmt.Fprintf(&b, "include %q\n", path)
			return true
		}
		return false
	}
	include("top")
	fmt.Fprintf(&b, "server_name: %q\n", c.env.ServerName)
	fmt.Fprintf(&b, "port: %d\n", c.env.ClientPort)
	if c.advertiseHost != "" {
		fmt.Fprintf(&b, "client_advertise: %q\n", fmt.Sprintf("%s:%d", c.advertiseHost, c.env.ClientPort))
	}
	// Every server would take the default monitoring port otherwise.
	b.WriteString("http_port: 0\n")
	if c.env.JetStream {
		fmt.Fprintf(&b, "jetstream {\n  enabled: true\n  store_dir: %q\n", c.env.StoreDir)
		include("jetstream")
		b.WriteString("}\n")
	} else {
		fmt.Fprintf(&b, "store_dir: %q\njetstream: disabled\n", c.env.StoreDir)
	}
	include("tls")
	if c.tls != nil {
		verify := "false"
		if c.tls.mutual {
			verify = "true"
		}
		timeout := c.tls.timeout
		if timeout <= 0 {
			timeout = 2
		}
		fmt.Fprintf(&b, "tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  verify: %s\n  timeout: %s\n",
			c.env.TLS.CertFile, c.env.TLS.KeyFile, c.env.TLS.CAFile, verify, strconv.FormatFloat(timeout, 'f', -1, 64))
		if c.tls.handshakeFirst {
			b.WriteString("  handshake_first: true\n")
		}
		b.WriteString("}\n")
	}
	include("websocket")
	include("mqtt")
	include("leafnode")
	if !include("system_account") {
		b.WriteString("system_account: \"$SYS\"\n")
	}
	if !include("authorization") {
		b.WriteString("no_auth_user: user1\n")
	}
	if !include("accounts") {
		b.WriteString("accounts {\n")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, "  USERS%d { users = [ { user: \"user%d\", pass: \"password\" } ], jetstream: %t }\n", i, i, c.env.JetStream)
		}
		b.WriteString("  $SYS { users = [ { user: \"system\", pass: \"password\" } ] }\n}\n")
	}
	path := filepath.Join(dir, "server.conf")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}
