package server

import (
	"crypto/x509"
	"slices"
	"strings"
)

// dnAttr is one attribute of a distinguished name, its type upper-cased
// ("CN", "O", or a dotted OID) and its value unescaped.
type dnAttr struct{ typ, value string }

// parseDN reads a distinguished name written as RFC 4514 ("CN=alice,
// O=acme", backslash escapes) into its attributes, in order; ok is false
// for anything else. Used to match a user name against a certificate's
// subject under verify_and_map.
func parseDN(s string) (attrs []dnAttr, ok bool) {
	var cur strings.Builder
	var parts []string
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			cur.WriteByte('\\')
			cur.WriteByte(s[i+1])
			i++
		case c == ',' || c == '+' || c == ';':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, cur.String())
	for _, p := range parts {
		typ, value, found := strings.Cut(p, "=")
		typ = strings.ToUpper(strings.TrimSpace(typ))
		if !found || typ == "" {
			return nil, false
		}
		attrs = append(attrs, dnAttr{typ: typ, value: unescapeDN(strings.TrimSpace(value))})
	}
	return attrs, true
}

func unescapeDN(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// subjectAttrs lists a certificate subject's attributes with the names
// RFC 4514 gives them.
func subjectAttrs(cert *x509.Certificate) []dnAttr {
	attrs, _ := parseDN(cert.Subject.ToRDNSequence().String())
	return attrs
}

// sameDN reports whether two attribute lists hold the same attributes,
// in any order (the reference also accepts a reordered DN).
func sameDN(a, b []dnAttr) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(x dnAttr) string { return x.typ + "=" + x.value }
	ka, kb := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		ka[i], kb[i] = key(a[i]), key(b[i])
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}
