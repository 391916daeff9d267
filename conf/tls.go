package conf

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// TLS is the tls block, as nats-server spells it. Files and names are
// checked by the server when it starts.
type TLS struct {
	CertFile       string
	KeyFile        string
	CAFile         string
	Verify         bool
	VerifyAndMap   bool
	Timeout        time.Duration // 0: the server's default (2s)
	HandshakeFirst bool
	// HandshakeFirstFallback lets clients that do not start with TLS
	// upgrade after this long ("handshake_first: auto" or a duration).
	HandshakeFirstFallback time.Duration
	MinVersion             string // "1.2" or "1.3"
	CipherSuites           []string
	CurvePreferences       []string
}

// tls parses the block.
func (p *blockParser) tls(raw any) *TLS {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	t := &TLS{}
	f := p.fields("", m, [][]string{
		{"cert_file"}, {"key_file"}, {"ca_file"}, {"verify"}, {"verify_and_map", "map_and_verify"},
		{"timeout"}, {"handshake_first", "first"}, {"min_version"}, {"cipher_suites"}, {"curve_preferences"},
	})
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, path := f[name], "."+name
		switch name {
		case "cert_file":
			t.CertFile = p.str(path, v)
		case "key_file":
			t.KeyFile = p.str(path, v)
		case "ca_file":
			t.CAFile = p.str(path, v)
		case "verify":
			t.Verify = p.boolean(path, v)
		case "verify_and_map":
			t.VerifyAndMap = p.boolean(path, v)
		case "timeout":
			t.Timeout = p.seconds(path, v)
		case "handshake_first":
			t.HandshakeFirst, t.HandshakeFirstFallback = p.handshakeFirst(path, v)
		case "min_version":
			if n, ok := v.(float64); ok { // a bare 1.2 in YAML or TOML
				t.MinVersion = map[float64]string{1.2: "1.2", 1.3: "1.3"}[n]
				if t.MinVersion == "" {
					p.bad(path, "%v is not 1.2 or 1.3", n)
				}
				continue
			}
			t.MinVersion = p.str(path, v)
		case "cipher_suites":
			t.CipherSuites = p.strings(path, v)
		case "curve_preferences":
			t.CurvePreferences = p.strings(path, v)
		}
	}
	return t
}

// autoFallback is what "handshake_first: auto" waits for a TLS-first
// client, nats-server's default.
const autoFallback = 50 * time.Millisecond

// handshakeFirst reads handshake_first as nats-server does: a boolean,
// "auto", or a fallback duration.
func (p *blockParser) handshakeFirst(path string, raw any) (bool, time.Duration) {
	if s, ok := raw.(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "auto", "auto_fallback":
			return true, autoFallback
		case "true", "on", "false", "off", "yes", "no", "enabled", "disabled":
		default:
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil || d <= 0 {
				p.bad(path, "%s is not a boolean, \"auto\" or a duration", describe(raw))
				return false, 0
			}
			return true, d
		}
	}
	return p.boolean(path, raw), 0
}

// tlsValue binds the tls block, which only a file can set.
type tlsValue struct{ p **TLS }

func (v tlsValue) set(raw any) error {
	var bp blockParser
	t := bp.tls(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = t
	return nil
}

func (v tlsValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v tlsValue) kind() string { return "block" }
