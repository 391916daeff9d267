package conf

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nkeys"
)

// The leafnodes key is nats-server's block for joining hubs as a leaf
// node, with its key names and aliases (v2.15.2):
//
//	leafnodes {
//	  reconnect: 2s                 # or reconnect_delay, reconnect_interval
//	  dial_timeout: 1s              # for remotes that set none
//	  remotes: [
//	    { url: "nats-leaf://user:pass@hub1:7422"   # or urls: [...]
//	      credentials: /etc/bus/leaf.creds         # or creds; or nkey (seed): one of them
//	      account: "$G"                            # or local
//	      deny_imports: ["a.>"], deny_exports: ["b.>"]
//	      no_randomize: true                       # or dont_randomize
//	      tls { ca_file, cert_file, key_file, insecure, timeout }
//	      dial_timeout: 1s, first_info_timeout: 1s
//	      ws_compression: true, ws_no_masking: true  # for ws:// and wss:// urls
//	      disabled: false
//	    }
//	  ]
//	}
//
// bus is a leaf, not a hub: the keys with which nats-server listens for
// leaf nodes (port, authorization, tls at the top of the block …) and
// those that shape features bus's leaf connections lack (compression,
// proxy …) are refused, naming the key, rather than ignored,
// since a config that sets them expects something bus would not do. An
// off value of such a key (compression: off, hub: false) asks for nothing
// and is accepted.

// LeafNodes is the leafnodes block: the hubs bus joins as a leaf node.
type LeafNodes struct {
	// Remotes are the hubs to join, in the file's order, disabled ones
	// included.
	Remotes []LeafRemote
	// Reconnect is the first wait before a lost or refused remote is
	// dialed again; 0 means the server's default (1s).
	Reconnect time.Duration
}

// LeafRemote is one entry of leafnodes.remotes.
type LeafRemote struct {
	// URLs are nats://, tls:// or nats-leaf:// URLs, or all ws:// or
	// wss:// (the hub's websocket listener), duplicates dropped as
	// nats-server drops them; user and password may be in them.
	URLs        []string
	NoRandomize bool
	// Credentials is a .creds file; Nkey a user nkey seed. At most one.
	Credentials string
	Nkey        string
	// Account is the local account the link is bound to: "" or "$G".
	Account     string
	DenyImports []string
	DenyExports []string
	TLS         *LeafTLS // nil: plain unless a URL is tls://
	// DialTimeout and FirstInfoTimeout bound one connection attempt; 0
	// means the server's defaults. A remote without dial_timeout takes
	// the block's.
	DialTimeout      time.Duration
	FirstInfoTimeout time.Duration
	// Disabled remotes are kept in the config but never dialed.
	Disabled bool
	// WSCompression and WSNoMasking are ws_compression and
	// ws_no_masking, for ws:// and wss:// URLs.
	WSCompression bool
	WSNoMasking   bool
}

// LeafTLS is a remote's tls block.
type LeafTLS struct {
	CAFile   string // verifies the hub's certificate
	CertFile string // bus's certificate, for hubs that verify leaves
	KeyFile  string
	Insecure bool          // accept any hub certificate (tests only)
	Timeout  time.Duration // handshake bound; 0: the server's default
}

// leafGlobalAccount is the global account, the only one a remote may
// name: a leaf link carries the global account's subject space.
const leafGlobalAccount = "$G"

// notAHub is why the keys with which nats-server accepts leaf nodes are
// refused.
const notAHub = "bus is a leaf, not a hub: it does not accept leaf connections, so it has no listener for this key to configure (leafnodes.remotes dials out)"

// The nats-server keys bus does not act on, by canonical name, with the
// reason each is refused; leafOffOK lists those whose off value is
// accepted.
var (
	leafBlockUnsupported = map[string]string{
		"listen": notAHub, "port": notAHub, "host": notAHub, "authorization": notAHub,
		"tls": notAHub + "; a remote's TLS goes in its own tls block", "advertise": notAHub,
		"no_advertise": notAHub, "min_version": notAHub,
		"compression":               "bus's leaf connections are not compressed",
		"isolate_leafnode_interest": "bus's leaf connections do not isolate interest",
		"write_deadline":            "bus has no write deadline of its own for leaf connections",
		"write_timeout":             "bus's leaf connections have no write timeout policy",
	}
	leafRemoteUnsupported = map[string]string{
		"hub":                       "bus cannot be the hub side of a link it dials",
		"jetstream_cluster_migrate": "bus has no JetStream cluster to migrate",
		"isolate_leafnode_interest": "bus's leaf connections do not isolate interest",
		"request_isolation":         "bus's leaf connections do not isolate interest",
		"compression":               "bus's leaf connections are not compressed",
		"proxy":                     "bus does not dial through a proxy",
		"ignore_discovered_servers": "bus always adds the URLs a hub advertises",
	}
	leafTLSUnsupported = [][]string{
		{"verify"}, {"verify_and_map"}, {"verify_cert_and_check_known_urls"}, {"allow_insecure_cipher_suites"},
		{"cipher_suites"}, {"curve_preferences"}, {"connection_rate_limit"}, {"pinned_certs"}, {"cert_store"},
		{"cert_match_by"}, {"cert_match"}, {"ca_certs_match"}, {"handshake_first", "first", "immediate"},
		{"cert_match_skip_invalid"}, {"ocsp_peer"}, {"certs", "certificates"}, {"min_version"},
	}
	leafOffOK = []string{
		"compression", "isolate_leafnode_interest", "no_advertise", "hub",
		"jetstream_cluster_migrate", "request_isolation", "ignore_discovered_servers", "handshake_first",
	}
)

// leafNodes parses the block.
func (p *blockParser) leafNodes(raw any) *LeafNodes {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	known := [][]string{
		{"remotes"}, {"reconnect", "reconnect_delay", "reconnect_interval"}, {"dial_timeout"},
		{"listen"}, {"port"}, {"host", "net"}, {"authorization"}, {"tls"}, {"advertise", "leafnode_advertise"},
		{"no_advertise"}, {"min_version", "minimum_version"}, {"compression"},
		{"isolate_leafnode_interest", "isolate"}, {"write_deadline"}, {"write_timeout"},
	}
	f := p.fields("", m, known)
	ln := &LeafNodes{Remotes: []LeafRemote{}}
	var dialTimeout time.Duration
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, path := f[name], "."+name
		switch name {
		case "remotes":
			ln.Remotes = p.leafRemotes(path, v)
		case "reconnect":
			ln.Reconnect = p.duration(path, v)
		case "dial_timeout":
			dialTimeout = p.duration(path, v)
		default:
			p.unsupported(path, v, leafBlockUnsupported[name])
		}
	}
	for i := range ln.Remotes {
		if ln.Remotes[i].DialTimeout == 0 {
			ln.Remotes[i].DialTimeout = dialTimeout
		}
	}
	return ln
}

// leafRemotes parses the remotes list.
func (p *blockParser) leafRemotes(path string, raw any) []LeafRemote {
	list, ok := asList(raw)
	if !ok {
		p.bad(path, "%s is not a list of remotes", describe(raw))
		return nil
	}
	remotes := make([]LeafRemote, 0, len(list))
	seen := map[string]int{} // remote identity → index, as nats-server names remotes
	for i, entry := range list {
		rpath := fmt.Sprintf("%s[%d]", path, i)
		m, ok := p.block(rpath, entry)
		if !ok {
			continue
		}
		r, ok := p.leafRemote(rpath, m)
		if !ok {
			continue
		}
		id := fmt.Sprintf("%q %q %q %q", r.URLs, cmp.Or(r.Account, leafGlobalAccount), r.Credentials, r.Nkey)
		if j, dup := seen[id]; dup {
			p.bad(rpath, "is the same remote as remotes[%d] (urls, account and credentials)", j)
			continue
		}
		seen[id] = i
		remotes = append(remotes, r)
	}
	return remotes
}

// leafRemote parses one remote, reporting whether it is free of errors.
func (p *blockParser) leafRemote(path string, m map[string]any) (LeafRemote, bool) {
	before := len(p.errs)
	known := [][]string{
		{"url", "urls"}, {"no_randomize", "dont_randomize"}, {"account", "local"}, {"credentials", "creds"},
		{"nkey", "seed"}, {"tls"}, {"deny_imports", "deny_import"}, {"deny_exports", "deny_export"},
		{"dial_timeout"}, {"first_info_timeout"}, {"disabled"},
		{"hub"}, {"ws_compression", "ws_compress", "websocket_compress", "websocket_compression"},
		{"ws_no_masking", "websocket_no_masking"}, {"jetstream_cluster_migrate", "js_cluster_migrate"},
		{"isolate_leafnode_interest", "isolate"}, {"request_isolation"}, {"compression"}, {"proxy"},
		{"ignore_discovered_servers"},
	}
	f := p.fields(path, m, known)
	var r LeafRemote
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, fpath := f[name], path+"."+name
		switch name {
		case "url":
			r.URLs = p.leafURLs(fpath, v)
		case "no_randomize":
			r.NoRandomize = p.boolean(fpath, v)
		case "account":
			r.Account = p.str(fpath, v)
			if r.Account != "" && r.Account != leafGlobalAccount {
				p.bad(fpath, "%q is not the global account %q (a leaf link carries the global account only; binding one to another account is not in bus yet)", r.Account, leafGlobalAccount)
			}
		case "credentials":
			r.Credentials = p.str(fpath, v)
		case "nkey":
			// The seed is a secret: the error does not repeat it.
			r.Nkey = p.str(fpath, v)
			if prefix, _, err := nkeys.DecodeSeed([]byte(r.Nkey)); r.Nkey != "" && (err != nil || prefix != nkeys.PrefixByteUser) {
				p.bad(fpath, "is not a user nkey seed (SU…)")
			}
		case "tls":
			r.TLS = p.leafTLS(fpath, v)
		case "deny_imports":
			r.DenyImports = p.subjects(fpath, v)
		case "deny_exports":
			r.DenyExports = p.subjects(fpath, v)
		case "dial_timeout":
			r.DialTimeout = p.duration(fpath, v)
		case "first_info_timeout":
			r.FirstInfoTimeout = p.duration(fpath, v)
		case "disabled":
			r.Disabled = p.boolean(fpath, v)
		case "ws_compression":
			r.WSCompression = p.boolean(fpath, v)
		case "ws_no_masking":
			r.WSNoMasking = p.boolean(fpath, v)
		default:
			p.unsupported(fpath, v, leafRemoteUnsupported[name])
		}
	}
	if _, ok := f["url"]; !ok {
		p.bad(path, "needs a url (or urls)")
	}
	if r.Credentials != "" && r.Nkey != "" {
		p.bad(path, "credentials and nkey are exclusive: set one")
	}
	ws := 0
	for _, u := range r.URLs {
		if strings.HasPrefix(u, "ws://") || strings.HasPrefix(u, "wss://") {
			ws++
		}
	}
	if ws != 0 && ws != len(r.URLs) {
		p.bad(path+".url", "cannot mix websocket (ws://, wss://) and other urls, as nats-server refuses")
	}
	return r, len(p.errs) == before
}

// leafURLs reads url or urls: one URL or a list, duplicates dropped.
func (p *blockParser) leafURLs(path string, raw any) []string {
	in, isList := asList(raw)
	if s, ok := raw.(string); ok {
		in = []any{s}
	} else if !isList || len(in) == 0 {
		p.bad(path, "%s is not a URL or a list of URLs", describe(raw))
		return nil
	}
	var out []string
	for i, x := range in {
		upath := path
		if isList {
			upath = fmt.Sprintf("%s[%d]", path, i)
		}
		s, ok := x.(string)
		if !ok {
			p.bad(upath, "%s is not a URL", describe(x))
			continue
		}
		s = strings.TrimSpace(s)
		if reason := leafURLProblem(s); reason != "" {
			p.bad(upath, "%s %s", shownURL(s), reason)
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// leafURLProblem says what is wrong with a remote's URL, or "".
func leafURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "does not parse as a URL"
	case !slices.Contains([]string{"nats", "tls", "nats-leaf", "ws", "wss"}, u.Scheme):
		return "needs the scheme nats://, tls://, nats-leaf://, ws:// or wss://"
	case u.Hostname() == "":
		return "has no host"
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "has a port out of range 1..65535"
		}
	}
	return ""
}

// shownURL quotes a URL for an error with its password hidden.
func shownURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return strconv.Quote(u.Redacted())
	}
	return strconv.Quote(s)
}

// leafTLS parses a remote's tls block.
func (p *blockParser) leafTLS(path string, raw any) *LeafTLS {
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	known := append([][]string{{"ca_file"}, {"cert_file"}, {"key_file"}, {"insecure"}, {"timeout"}}, leafTLSUnsupported...)
	f := p.fields(path, m, known)
	t := &LeafTLS{}
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, fpath := f[name], path+"."+name
		switch name {
		case "ca_file":
			t.CAFile = p.str(fpath, v)
		case "cert_file":
			t.CertFile = p.str(fpath, v)
		case "key_file":
			t.KeyFile = p.str(fpath, v)
		case "insecure":
			t.Insecure = p.boolean(fpath, v)
		case "timeout":
			t.Timeout = p.seconds(fpath, v)
		default:
			p.unsupported(fpath, v, "bus's leaf TLS takes only ca_file, cert_file, key_file, insecure and timeout")
		}
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		p.bad(path, "needs both cert_file and key_file, or neither")
	}
	return t
}

// unsupported refuses a key nats-server accepts and bus does not act
// on, unless its value is off and so asks for nothing.
func (p *blockParser) unsupported(path string, raw any, reason string) {
	name := path[strings.LastIndexByte(path, '.')+1:]
	if slices.Contains(leafOffOK, name) && isOff(raw) {
		return
	}
	p.errs = append(p.errs, &nestedError{path: path, reason: reason, err: ErrOutOfRange})
}

// isOff reports whether a value is false or nats-server's "off".
func isOff(raw any) bool {
	switch v := raw.(type) {
	case bool:
		return !v
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "false", "off", "disabled", "no":
			return true
		}
	}
	return false
}

// duration reads a non-negative duration: a Go duration string or a
// whole number of seconds, as nats-server's parseDuration.
func (p *blockParser) duration(path string, raw any) time.Duration {
	d, ok := duration(raw)
	switch {
	case !ok:
		p.bad(path, "%s is not a duration", describe(raw))
	case d < 0:
		p.bad(path, "%s is negative", formatDuration(d))
		return 0
	}
	return d
}

// subjects reads a subject or a list of them, each a valid subject (no
// spaces, no empty tokens, > only last), as nats-server checks deny
// lists.
func (p *blockParser) subjects(path string, raw any) []string {
	if list, ok := asList(raw); ok {
		raw = list // TOML's []map and friends aside, lists are []any
	}
	before := len(p.errs)
	out := p.strings(path, raw)
	if len(p.errs) > before {
		return out
	}
	for i, s := range out {
		if !validSubject(s) {
			spath := path
			if _, isList := raw.([]any); isList {
				spath = fmt.Sprintf("%s[%d]", path, i)
			}
			p.bad(spath, "%q is not a valid subject", s)
		}
	}
	return out
}

// validSubject applies nats-server's subject rules: non-empty tokens
// separated by dots, no whitespace, and > only as the last token. conf
// imports nothing of ours, so this is subjects.ValidSubject written
// again; TestValidSubjectIsSubjectsRule pins the two together.
func validSubject(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n\f") {
		return false
	}
	tokens := strings.Split(s, ".")
	for i, tok := range tokens {
		if tok == "" || tok == ">" && i != len(tokens)-1 {
			return false
		}
	}
	return true
}

// asList returns a list of any shape a file format decodes to.
func asList(raw any) ([]any, bool) {
	switch v := raw.(type) {
	case []any:
		return v, true
	case []map[string]any:
		out := make([]any, len(v))
		for i, m := range v {
			out[i] = m
		}
		return out, true
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// leafNodesValue binds the leafnodes block, which only a file can set.
type leafNodesValue struct{ p **LeafNodes }

func (v leafNodesValue) set(raw any) error {
	var bp blockParser
	ln := bp.leafNodes(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = ln
	return nil
}

func (v leafNodesValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v leafNodesValue) kind() string { return "block" }
