package conf

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Authorization is the authorization block, as nats-server spells it:
// token, user and password, or a users list, with default permissions
// and the auth timeout. Values are checked for shape here; subjects,
// nkeys and the combination of settings are checked by the server.
type Authorization struct {
	Token              string
	User               string
	Password           string
	Users              []User // nil when the block has no users list
	DefaultPermissions *Permissions
	Timeout            time.Duration // 0: the server's default (2s)
	// ReferenceStoredReads restores nats-server's rule for stored
	// messages delivered to an inbox (see docs/security.md).
	ReferenceStoredReads bool
	// Callout is auth_callout (authcallout.go); nil when not set.
	Callout *AuthCallout
}

// User is one entry of the users list.
type User struct {
	Name        string
	Password    string
	Nkey        string
	Permissions *Permissions
	// AllowedConnectionTypes are nats-server's allowed_connection_types
	// (STANDARD, WEBSOCKET, LEAFNODE, LEAFNODE_WS, MQTT, MQTT_WS,
	// IN_PROCESS), upper-cased; nil allows every type.
	AllowedConnectionTypes []string
}

// Permissions are a user's publish and subscribe rights.
type Permissions struct {
	Publish   *SubjectPermission
	Subscribe *SubjectPermission
	Responses *ResponsePermission // allow_responses
}

// SubjectPermission is an allow and a deny list of subjects. A bare list
// in the file is the allow list. Allow is nil when not given, and a
// non-nil empty list when given empty: they differ for publish.
type SubjectPermission struct {
	Allow []string
	Deny  []string
}

// ResponsePermission is allow_responses; zero fields take the server's
// defaults (one response, within 2 minutes).
type ResponsePermission struct {
	MaxMsgs int
	Expires time.Duration
}

// nestedError is a problem inside a block value, at path below the key
// ("users[1].pasword"). Load turns each into a *KeyError naming the full
// path.
type nestedError struct {
	path   string
	reason string
	err    error // ErrUnknownKey or ErrBadValue
}

func (e *nestedError) Error() string { return e.path + ": " + e.reason }

// nestedErrors is every problem found in one block.
type nestedErrors []*nestedError

func (e nestedErrors) Error() string {
	msgs := make([]string, len(e))
	for i, ne := range e {
		msgs[i] = ne.Error()
	}
	return strings.Join(msgs, "; ")
}

// blockParser walks one block value, collecting every problem.
type blockParser struct{ errs nestedErrors }

func (p *blockParser) bad(path, format string, args ...any) {
	p.errs = append(p.errs, &nestedError{path: path, reason: fmt.Sprintf(format, args...), err: ErrBadValue})
}

// fields checks the keys of m against known, whose entries list a
// canonical name first and then its aliases, and returns m keyed by the
// canonical names. Unknown keys are reported with a hint.
func (p *blockParser) fields(path string, m map[string]any, known [][]string) map[string]any {
	out := map[string]any{}
	canonical := map[string]string{}
	var names []string
	for _, names2 := range known {
		for _, n := range names2 {
			canonical[n] = names2[0]
		}
		names = append(names, names2[0])
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name, ok := canonical[strings.ToLower(k)]
		if !ok {
			p.errs = append(p.errs, &nestedError{path: path + "." + k, reason: hint(k, names), err: ErrUnknownKey})
			continue
		}
		if _, dup := out[name]; dup {
			p.bad(path+"."+k, "is another name for %s, which is also set", name)
			continue
		}
		out[name] = m[k]
	}
	return out
}

func (p *blockParser) str(path string, raw any) string {
	s, ok := raw.(string)
	if !ok {
		p.bad(path, "%s is not a string", describe(raw))
	}
	return s
}

func (p *blockParser) boolean(path string, raw any) bool {
	var b bool
	if err := (boolValue{&b}).set(raw); err != nil {
		p.bad(path, "%s", err)
	}
	return b
}

// seconds reads a duration, also as a fractional count of seconds, as
// nats-server's timeout keys allow.
func (p *blockParser) seconds(path string, raw any) time.Duration {
	if f, ok := raw.(float64); ok && f >= 0 && f < 1<<31 {
		return time.Duration(f * float64(time.Second))
	}
	d, ok := duration(raw)
	if !ok || d < 0 {
		p.bad(path, "%s is not a duration", describe(raw))
	}
	return d
}

// strings reads a subject or a list of them.
func (p *blockParser) strings(path string, raw any) []string {
	switch v := raw.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				p.bad(fmt.Sprintf("%s[%d]", path, i), "%s is not a subject", describe(x))
				continue
			}
			out = append(out, s)
		}
		return out
	case nil:
		return []string{}
	}
	p.bad(path, "%s is not a subject or a list of subjects", describe(raw))
	return nil
}

func (p *blockParser) block(path string, raw any) (map[string]any, bool) {
	m, ok := raw.(map[string]any)
	if !ok {
		p.bad(path, "%s is not a map", describe(raw))
	}
	return m, ok
}

// authorization parses the block.
func (p *blockParser) authorization(raw any) *Authorization {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	a := &Authorization{}
	f := p.fields("", m, [][]string{
		{"user", "username"}, {"password", "pass"}, {"token"}, {"timeout"}, {"users"},
		{"default_permissions", "default_permission", "permissions"}, {"reference_stored_reads"}, {"auth_callout", "auth_hook"},
	})
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, path := f[name], "."+name
		switch name {
		case "user":
			a.User = p.str(path, v)
		case "password":
			a.Password = p.str(path, v)
		case "token":
			a.Token = p.str(path, v)
		case "timeout":
			a.Timeout = p.seconds(path, v)
		case "users":
			a.Users = p.users(path, v)
		case "default_permissions":
			a.DefaultPermissions = p.permissions(path, v)
		case "reference_stored_reads":
			a.ReferenceStoredReads = p.boolean(path, v)
		case "auth_callout":
			a.Callout = p.authCallout(path, v)
		}
	}
	return a
}

func (p *blockParser) users(path string, raw any) []User {
	list, ok := raw.([]any)
	if !ok {
		p.bad(path, "%s is not a list of users", describe(raw))
		return nil
	}
	users := make([]User, 0, len(list))
	for i, entry := range list {
		upath := fmt.Sprintf("%s[%d]", path, i)
		m, ok := p.block(upath, entry)
		if !ok {
			continue
		}
		var u User
		f := p.fields(upath, m, [][]string{
			{"user", "username"}, {"password", "pass"}, {"nkey"}, {"permissions", "permission", "authorization"},
			{"allowed_connection_types", "connection_types", "clients"},
		})
		for _, name := range slices.Sorted(maps.Keys(f)) {
			v, fpath := f[name], upath+"."+name
			switch name {
			case "user":
				u.Name = p.str(fpath, v)
			case "password":
				u.Password = p.str(fpath, v)
			case "nkey":
				u.Nkey = p.str(fpath, v)
			case "permissions":
				u.Permissions = p.permissions(fpath, v)
			case "allowed_connection_types":
				u.AllowedConnectionTypes = p.connectionTypes(fpath, v)
			}
		}
		if u.Name == "" && u.Nkey == "" {
			p.bad(upath, "needs a user or an nkey")
		}
		users = append(users, u)
	}
	return users
}

// connectionTypes are nats-server's names for how a client connects.
var connectionTypes = []string{"STANDARD", "WEBSOCKET", "LEAFNODE", "LEAFNODE_WS", "MQTT", "MQTT_WS", "IN_PROCESS"}

// connectionTypes reads allowed_connection_types: a name or a list of
// them, in any case.
func (p *blockParser) connectionTypes(path string, raw any) []string {
	list := p.strings(path, raw)
	out := make([]string, 0, len(list))
	for _, t := range list {
		up := strings.ToUpper(t)
		if !slices.Contains(connectionTypes, up) {
			p.bad(path, "%q is not a connection type (%s)", t, strings.Join(connectionTypes, ", "))
			continue
		}
		out = append(out, up)
	}
	return out
}

func (p *blockParser) permissions(path string, raw any) *Permissions {
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	perms := &Permissions{}
	f := p.fields(path, m, [][]string{
		{"publish", "pub", "import"}, {"subscribe", "sub", "export"}, {"allow_responses", "publish_allow_responses"},
	})
	for _, name := range slices.Sorted(maps.Keys(f)) {
		v, fpath := f[name], path+"."+name
		switch name {
		case "publish":
			perms.Publish = p.subjectPermission(fpath, v)
		case "subscribe":
			perms.Subscribe = p.subjectPermission(fpath, v)
		case "allow_responses":
			perms.Responses = p.responses(fpath, v)
		}
	}
	return perms
}

// subjectPermission reads {allow, deny}, or a bare subject or list,
// which is the allow list.
func (p *blockParser) subjectPermission(path string, raw any) *SubjectPermission {
	m, ok := raw.(map[string]any)
	if !ok {
		return &SubjectPermission{Allow: p.strings(path, raw)}
	}
	sp := &SubjectPermission{}
	f := p.fields(path, m, [][]string{{"allow"}, {"deny"}})
	if v, ok := f["allow"]; ok {
		sp.Allow = p.strings(path+".allow", v)
	}
	if v, ok := f["deny"]; ok {
		sp.Deny = p.strings(path+".deny", v)
	}
	return sp
}

// responses reads allow_responses: a boolean, or {max, expires}.
func (p *blockParser) responses(path string, raw any) *ResponsePermission {
	m, ok := raw.(map[string]any)
	if !ok {
		if p.boolean(path, raw) {
			return &ResponsePermission{}
		}
		return nil
	}
	rp := &ResponsePermission{}
	f := p.fields(path, m, [][]string{{"max", "max_msgs", "max_messages", "max_responses"}, {"expires", "expiration", "ttl"}})
	if v, ok := f["max"]; ok {
		n, ok := number(v)
		if !ok || n > maxInt32 || n < -1 {
			p.bad(path+".max", "%s is not a count", describe(v))
		}
		rp.MaxMsgs = int(n)
	}
	if v, ok := f["expires"]; ok {
		rp.Expires = p.seconds(path+".expires", v)
	}
	return rp
}

// authValue binds the authorization block, which only a file can set.
type authValue struct{ p **Authorization }

func (v authValue) set(raw any) error {
	var bp blockParser
	a := bp.authorization(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = a
	return nil
}

func (v authValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v authValue) kind() string { return "block" }

// asNested unpacks the problems of a block value, or nil for any other
// error.
func asNested(err error) nestedErrors {
	var ne nestedErrors
	if errors.As(err, &ne) {
		return ne
	}
	return nil
}
