package conf

import (
	"github.com/spf13/pflag"
)

// nats-server's command line sets parts of two blocks that bus takes
// only from a file: --user, --pass and --auth the authorization block's
// user, password and token, and --tls, --tlscert, --tlskey, --tlscacert
// and --tlsverify the tls block. AddNATSFlags registers them; Load
// applies them over the file's blocks, as nats-server's flags beat its
// file.
func AddNATSFlags(fs *pflag.FlagSet) {
	fs.String("user", "", "user required of clients (sets authorization.user; nats-server's flag)")
	fs.String("pass", "", "password required of clients (sets authorization.password; nats-server's flag)")
	fs.String("auth", "", "token required of clients (sets authorization.token; nats-server's flag)")
	fs.Bool("tls", false, "TLS on the client port, with --tlscert and --tlskey (nats-server's flag)")
	fs.String("tlscert", "", "server certificate `file` (sets tls.cert_file)")
	fs.String("tlskey", "", "server private key `file` (sets tls.key_file)")
	fs.String("tlscacert", "", "CA certificates `file` to verify clients with (sets tls.ca_file)")
	fs.Bool("tlsverify", false, "require and verify client certificates (sets tls.verify)")
}

// natsFlags applies the flags of AddNATSFlags that were set to cfg;
// fs may be nil or lack them.
func natsFlags(fs *pflag.FlagSet, cfg *Config) []*KeyError {
	if fs == nil {
		return nil
	}
	changed := func(name string) (string, bool) {
		f := fs.Lookup(name)
		if f == nil || !f.Changed {
			return "", false
		}
		return f.Value.String(), true
	}
	var errs []*KeyError
	auth := func(set func(a *Authorization, v string), names ...string) {
		for _, name := range names {
			if v, ok := changed(name); ok {
				if cfg.Authorization == nil {
					cfg.Authorization = &Authorization{}
				} else {
					a := *cfg.Authorization
					cfg.Authorization = &a // the file's block may be shared
				}
				set(cfg.Authorization, v)
			}
		}
	}
	auth(func(a *Authorization, v string) { a.User = v }, "user")
	auth(func(a *Authorization, v string) { a.Password = v }, "pass")
	auth(func(a *Authorization, v string) { a.Token = v }, "auth")

	tlsSet := false
	tls := func(name string, set func(t *TLS, v string)) {
		v, ok := changed(name)
		if !ok {
			return
		}
		tlsSet = true
		if cfg.TLS == nil {
			cfg.TLS = &TLS{}
		} else {
			t := *cfg.TLS
			cfg.TLS = &t
		}
		set(cfg.TLS, v)
	}
	tls("tls", func(*TLS, string) {})
	tls("tlscert", func(t *TLS, v string) { t.CertFile = v })
	tls("tlskey", func(t *TLS, v string) { t.KeyFile = v })
	tls("tlscacert", func(t *TLS, v string) { t.CAFile = v })
	tls("tlsverify", func(t *TLS, v string) { t.Verify = v == "true" })
	if v, ok := changed("tls"); ok && v == "false" {
		cfg.TLS = nil // --tls=false turns the file's tls block off
	} else if tlsSet && (cfg.TLS.CertFile == "" || cfg.TLS.KeyFile == "") {
		errs = append(errs, &KeyError{Key: "tls", Source: "flags --tls…",
			Reason: "needs a certificate and a key: --tlscert and --tlskey (or the tls block's cert_file and key_file)", Err: ErrOutOfRange})
	}
	_, userSet := changed("user")
	_, passSet := changed("pass")
	if a := cfg.Authorization; (userSet || passSet) && (a.User == "") != (a.Password == "") {
		errs = append(errs, &KeyError{Key: "authorization", Source: "flags --user/--pass",
			Reason: "needs both a user and a password", Err: ErrOutOfRange})
	}
	return errs
}
