package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

// connFlags are how the client commands (bus dlq) reach a server: the
// nats CLI's flags, environment variables and contexts, so that a user
// who can reach a secured bus with `nats` reaches it with `bus dlq` by
// typing the same thing.
type connFlags struct {
	server, user, password, token string
	creds, nkey                   string
	tlsCert, tlsKey, tlsCA        string
	tlsFirst                      bool
	inboxPrefix                   string
	context                       string
	timeout                       time.Duration
}

func (f *connFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	env := os.Getenv
	fl.StringVarP(&f.server, "server", "s", env("NATS_URL"), "server URLs, comma separated (or $NATS_URL; default "+nats.DefaultURL+")")
	fl.StringVar(&f.user, "user", env("NATS_USER"), "user name, or a token when --password is empty (or $NATS_USER)")
	fl.StringVar(&f.password, "password", env("NATS_PASSWORD"), "password (or $NATS_PASSWORD)")
	fl.StringVar(&f.token, "token", env("NATS_TOKEN"), "authentication token (or $NATS_TOKEN)")
	fl.StringVar(&f.creds, "creds", env("NATS_CREDS"), "user credentials file, JWT and seed (or $NATS_CREDS)")
	fl.StringVar(&f.nkey, "nkey", env("NATS_NKEY"), "user nkey seed file (or $NATS_NKEY)")
	fl.StringVar(&f.tlsCert, "tlscert", env("NATS_CERT"), "TLS client certificate file (or $NATS_CERT)")
	fl.StringVar(&f.tlsKey, "tlskey", env("NATS_KEY"), "TLS client private key file (or $NATS_KEY)")
	fl.StringVar(&f.tlsCA, "tlsca", env("NATS_CA"), "TLS certificate authority file (or $NATS_CA)")
	fl.BoolVar(&f.tlsFirst, "tlsfirst", false, "TLS handshake before the server's INFO (handshake_first servers)")
	fl.StringVar(&f.inboxPrefix, "inbox-prefix", "", "prefix of reply inboxes, for users allowed only their own")
	fl.StringVar(&f.context, "context", env("NATS_CONTEXT"), "nats CLI context: a name under ~/.config/nats/context, or a .json file (or $NATS_CONTEXT)")
	timeout := 5 * time.Second
	if d, err := time.ParseDuration(env("NATS_TIMEOUT")); err == nil {
		timeout = d
	}
	fl.DurationVar(&f.timeout, "timeout", timeout, "time to wait for the server (or $NATS_TIMEOUT)")
}

func (f *connFlags) connect() (*nats.Conn, error) {
	opts, err := f.options()
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	nc, err := nats.Connect(f.server, opts...)
	if err != nil {
		return nil, &exitError{exitFailure, fmt.Errorf("connect to %s: %w", f.server, err)}
	}
	return nc, nil
}

// options fills what the flags and environment left empty from the nats
// context, as the nats CLI does, and turns the result into nats.go
// options. Files are checked here so that a mistyped path is named as
// the flag it came from rather than as a connect failure.
func (f *connFlags) options() ([]nats.Option, error) {
	if err := f.applyContext(); err != nil {
		return nil, err
	}
	if f.server == "" {
		f.server = nats.DefaultURL
	}
	for _, file := range []struct{ flag, path string }{
		{"--creds", f.creds}, {"--nkey", f.nkey}, {"--tlscert", f.tlsCert}, {"--tlskey", f.tlsKey}, {"--tlsca", f.tlsCA},
	} {
		if file.path == "" {
			continue
		}
		if _, err := os.Stat(file.path); err != nil {
			return nil, fmt.Errorf("%s: %w", file.flag, err)
		}
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return nil, errors.New("--tlscert and --tlskey go together: a client certificate needs its key")
	}

	opts := []nats.Option{nats.Name("bus dlq"), nats.Timeout(f.timeout), nats.MaxReconnects(0)}
	switch {
	case f.user != "" && f.password == "":
		opts = append(opts, nats.Token(f.user)) // the nats CLI's reading of --user alone
	case f.user != "":
		opts = append(opts, nats.UserInfo(f.user, f.password))
	}
	if f.token != "" {
		opts = append(opts, nats.Token(f.token))
	}
	if f.creds != "" {
		opts = append(opts, nats.UserCredentials(f.creds))
	}
	if f.nkey != "" {
		opt, err := nats.NkeyOptionFromSeed(f.nkey)
		if err != nil {
			return nil, fmt.Errorf("--nkey %s: %w", f.nkey, err)
		}
		opts = append(opts, opt)
	}
	if f.tlsCA != "" {
		opts = append(opts, nats.RootCAs(f.tlsCA))
	}
	if f.tlsCert != "" {
		opts = append(opts, nats.ClientCert(f.tlsCert, f.tlsKey))
	}
	if f.tlsFirst {
		opts = append(opts, nats.TLSHandshakeFirst())
	}
	if f.inboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(f.inboxPrefix))
	}
	return opts, nil
}

// natsContext is the part of a nats CLI context file that says how to
// connect (the JSON field names are the nats CLI's). The others (its
// description, color scheme, JetStream prefixes) change nothing here.
type natsContext struct {
	URL         string `json:"url"`
	Token       string `json:"token"`
	User        string `json:"user"`
	Password    string `json:"password"`
	Creds       string `json:"creds"`
	NKey        string `json:"nkey"`
	Cert        string `json:"cert"`
	Key         string `json:"key"`
	CA          string `json:"ca"`
	TLSFirst    bool   `json:"tls_first"`
	InboxPrefix string `json:"inbox_prefix"`
	// Ways to connect bus dlq does not offer: refused rather than
	// silently connecting some other way.
	NSC        string `json:"nsc"`
	SocksProxy string `json:"socks_proxy"`
	UserJWT    string `json:"user_jwt"`
	CertStore  string `json:"windows_cert_store"`
}

// applyContext loads the named context, or the one `nats context select`
// chose when none is named, and fills each connection setting the flags
// and environment left empty.
func (f *connFlags) applyContext() error {
	path, err := contextPath(f.context)
	if err != nil || path == "" {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--context: %w", err)
	}
	var c natsContext
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("--context: %s: %w", path, err)
	}
	for field, v := range map[string]string{"nsc": c.NSC, "socks_proxy": c.SocksProxy, "user_jwt": c.UserJWT, "windows_cert_store": c.CertStore} {
		if v != "" {
			return fmt.Errorf("--context: %s sets %s, which bus dlq does not support; use --creds, --nkey or --user", path, field)
		}
	}
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&f.server, c.URL)
	fill(&f.token, c.Token)
	if f.user == "" && f.password == "" {
		f.user, f.password = c.User, c.Password
	}
	fill(&f.creds, expandPath(c.Creds))
	fill(&f.nkey, expandPath(c.NKey))
	fill(&f.tlsCert, expandPath(c.Cert))
	fill(&f.tlsKey, expandPath(c.Key))
	fill(&f.tlsCA, expandPath(c.CA))
	fill(&f.inboxPrefix, c.InboxPrefix)
	f.tlsFirst = f.tlsFirst || c.TLSFirst
	return nil
}

// contextPath is where the nats CLI keeps the context name: an existing
// .json file is itself; a name is <config>/nats/context/<name>.json;
// no name is the one in <config>/nats/context.txt, or none. <config> is
// $XDG_CONFIG_HOME, else ~/.config.
func contextPath(name string) (string, error) {
	if strings.HasSuffix(name, ".json") {
		if _, err := os.Stat(name); err == nil {
			return name, nil
		}
	}
	root := os.Getenv("XDG_CONFIG_HOME")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			if name != "" {
				return "", fmt.Errorf("--context %s: %w", name, err)
			}
			return "", nil
		}
		root = filepath.Join(home, ".config")
	}
	dir := filepath.Join(root, "nats")
	if name == "" {
		selected, err := os.ReadFile(filepath.Join(dir, "context.txt"))
		if err != nil {
			return "", nil // nothing selected: flags and defaults only
		}
		if name = strings.TrimSpace(string(selected)); name == "" {
			return "", nil
		}
	}
	if strings.Contains(name, "..") || strings.ContainsAny(name, `/\`) {
		return "", fmt.Errorf("--context %q: not a context name, nor an existing .json file", name)
	}
	path := filepath.Join(dir, "context", name+".json")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("--context %s: no such context (looked for %s)", name, path)
	}
	return path, nil
}

// expandPath expands $VARIABLES and a leading ~ in a context's file
// paths, as the nats CLI does.
func expandPath(p string) string {
	p = os.ExpandEnv(p)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	return p
}
