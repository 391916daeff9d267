package server

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TLS defaults, as in the reference.
const (
	// DefaultTLSTimeout bounds a TLS handshake.
	DefaultTLSTimeout = 2 * time.Second
	// DefaultHandshakeFirstFallback is how long "handshake_first: auto"
	// waits for a TLS-first client.
	DefaultHandshakeFirstFallback = 50 * time.Millisecond
)

// TLSOptions is the tls block: the client port speaks TLS when CertFile
// is set. The zero value turns TLS off. Names are the reference's.
type TLSOptions struct {
	CertFile string // PEM certificate chain of the server
	KeyFile  string // PEM private key of CertFile
	// CAFile holds the PEM certificates that client certificates must
	// chain to when Verify or VerifyAndMap is set.
	CAFile string
	// Verify requires every client to present a certificate that chains
	// to CAFile.
	Verify bool
	// VerifyAndMap is Verify, and the certificate names the user: its
	// email addresses, DNS names and URIs, then its subject
	// ("CN=alice,O=acme"), are looked up in Authorization.Users in that
	// order, and the first found is the user, with no password.
	VerifyAndMap bool
	// Timeout bounds the handshake; 0 means DefaultTLSTimeout.
	Timeout time.Duration
	// HandshakeFirst starts TLS before the server says anything, for
	// clients that connect with TLS first (nats.go's TLSHandshakeFirst);
	// otherwise INFO goes out in plain text with tls_required and the
	// client upgrades.
	HandshakeFirst bool
	// HandshakeFirstFallback, with HandshakeFirst, serves both kinds of
	// clients: a client that has sent nothing this long after connecting
	// is sent INFO and upgrades as usual ("handshake_first: auto" is
	// DefaultHandshakeFirstFallback, as in the reference).
	HandshakeFirstFallback time.Duration
	// MinVersion is "1.2" (the default) or "1.3".
	MinVersion string
	// CipherSuites limits TLS 1.2's suites, by Go's names
	// ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"); only suites Go deems
	// secure are accepted. Empty means Go's defaults.
	CipherSuites []string
	// CurvePreferences orders the key exchanges, by Go's names
	// ("X25519", "CurveP256"); empty means Go's defaults.
	CurvePreferences []string
}

// enabled reports whether the client port speaks TLS.
func (t TLSOptions) enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// verifying reports whether clients must present a certificate.
func (t TLSOptions) verifying() bool { return t.Verify || t.VerifyAndMap }

// validate checks what can be checked without reading files.
func (t TLSOptions) validate() error {
	switch {
	case !t.enabled():
		if t.CAFile != "" || t.verifying() || t.HandshakeFirst || t.HandshakeFirstFallback != 0 {
			return fmt.Errorf("server: tls: cert_file and key_file are required")
		}
		return nil
	case t.CertFile == "" || t.KeyFile == "":
		return fmt.Errorf("server: tls: cert_file and key_file go together")
	case t.verifying() && t.CAFile == "":
		return fmt.Errorf("server: tls: verify needs ca_file")
	case t.Timeout < 0:
		return fmt.Errorf("server: tls: timeout %v is negative", t.Timeout)
	case t.HandshakeFirstFallback < 0 || t.HandshakeFirstFallback > 0 && !t.HandshakeFirst:
		return fmt.Errorf("server: tls: handshake_first fallback %v needs handshake_first", t.HandshakeFirstFallback)
	}
	if _, err := tlsVersion(t.MinVersion); err != nil {
		return err
	}
	if _, err := cipherSuites(t.CipherSuites); err != nil {
		return err
	}
	_, err := curves(t.CurvePreferences)
	return err
}

func tlsVersion(v string) (uint16, error) {
	switch v {
	case "", "1.2":
		return tls.VersionTLS12, nil
	case "1.3":
		return tls.VersionTLS13, nil
	}
	return 0, fmt.Errorf("server: tls: min_version %q is not 1.2 or 1.3", v)
}

func cipherSuites(names []string) ([]uint16, error) {
	var ids []uint16
	for _, name := range names {
		i := slices.IndexFunc(tls.CipherSuites(), func(c *tls.CipherSuite) bool { return c.Name == name })
		if i < 0 {
			if slices.ContainsFunc(tls.InsecureCipherSuites(), func(c *tls.CipherSuite) bool { return c.Name == name }) {
				return nil, fmt.Errorf("server: tls: cipher suite %q is insecure", name)
			}
			return nil, fmt.Errorf("server: tls: unknown cipher suite %q", name)
		}
		ids = append(ids, tls.CipherSuites()[i].ID)
	}
	return ids, nil
}

// knownCurves are the key exchanges curve_preferences may name.
func knownCurves() []tls.CurveID {
	return []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521}
}

func curves(names []string) ([]tls.CurveID, error) {
	var ids []tls.CurveID
	known := knownCurves()
	for _, name := range names {
		i := slices.IndexFunc(known, func(c tls.CurveID) bool { return strings.EqualFold(c.String(), name) })
		if i < 0 {
			return nil, fmt.Errorf("server: tls: unknown curve %q", name)
		}
		ids = append(ids, known[i])
	}
	return ids, nil
}
