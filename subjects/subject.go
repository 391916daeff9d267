package subjects

// Subject syntax (PROTOCOL.md §5). The rules are byte-for-byte those of the
// reference server's IsValidSubject and IsValidPublishSubject; the fuzz target
// FuzzValidSubject holds us to them.

const (
	sep = '.' // token separator
	pwc = '*' // partial wildcard: a token that is exactly "*" matches one token
	fwc = '>' // full wildcard: a last token that is exactly ">" matches the rest
)

// ValidSubject reports whether s is a valid subscription subject: non-empty,
// no empty token, no whitespace (space, tab, CR, LF, form feed) anywhere, and
// a ">" token only as the last token. A token that merely contains a wildcard
// character ("fo*", "a>b") is an ordinary literal token.
func ValidSubject(s string) bool {
	return validSubject(s, allowWildcards)
}

// ValidSubjectBytes is ValidSubject for a subject still in a network buffer.
// It does not allocate.
func ValidSubjectBytes(b []byte) bool {
	return validSubject(b, allowWildcards)
}

// ValidLiteral reports whether s is a valid publish subject: a valid subject
// in which no token is exactly "*" or ">".
func ValidLiteral(s string) bool {
	return validSubject(s, literalOnly)
}

// ValidLiteralBytes is ValidLiteral for a subject still in a network buffer.
// It does not allocate; see BenchmarkValidLiteralBytes.
func ValidLiteralBytes(b []byte) bool {
	return validSubject(b, literalOnly)
}

// ValidQueue reports whether q is a valid queue group name: non-empty and
// without whitespace. Dots and wildcard characters carry no meaning in a
// queue name and are allowed.
func ValidQueue(q string) bool {
	return validQueue(q)
}

// ValidQueueBytes is ValidQueue for a name still in a network buffer. It does
// not allocate.
func ValidQueueBytes(b []byte) bool {
	return validQueue(b)
}

// isLiteral reports whether no token of s is exactly "*" or ">". It does not
// check anything else; use it on subjects already known to be valid.
func isLiteral(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == sep {
			if i-start == 1 && (s[start] == pwc || s[start] == fwc) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// wildcardRule says whether wildcard tokens are acceptable to validSubject.
type wildcardRule uint8

const (
	allowWildcards wildcardRule = iota // a subscription subject
	literalOnly                        // a publish subject
)

// validSubject is the single scan behind the Valid* functions, shared by the
// string and []byte forms so that they cannot drift apart. See
// BenchmarkValidLiteralBytes.
func validSubject[S ~string | ~[]byte](s S, rule wildcardRule) bool {
	start := 0 // first byte of the current token
	sawFwc := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > sep {
			continue // letters, digits, '_', '>' and the like: nothing to check
		}
		if c != sep {
			if isSpace(c) {
				return false
			}
			continue
		}
		if !validToken(s[start:i], rule, &sawFwc) {
			return false
		}
		start = i + 1
	}
	return validToken(s[start:], rule, &sawFwc)
}

// validToken checks one complete token: not empty, not after a ">" token,
// and a wildcard only if rule allows. It records whether tok is ">".
func validToken[S ~string | ~[]byte](tok S, rule wildcardRule, sawFwc *bool) bool {
	if len(tok) == 0 || *sawFwc {
		return false
	}
	if len(tok) == 1 && (tok[0] == pwc || tok[0] == fwc) {
		if rule == literalOnly {
			return false
		}
		*sawFwc = tok[0] == fwc
	}
	return true
}

func validQueue[S ~string | ~[]byte](q S) bool {
	if len(q) == 0 {
		return false
	}
	for i := 0; i < len(q); i++ {
		if isSpace(q[i]) {
			return false
		}
	}
	return true
}

// isSpace is the reference server's whitespace set for subjects. Vertical tab
// and non-ASCII spaces are not in it, so they are legal subject bytes.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f':
		return true
	}
	return false
}
