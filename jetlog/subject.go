package jetlog

import "strings"

// validLiteral reports whether s is a subject a message can be published
// to: non-empty dot-separated tokens without wildcards or whitespace.
func validLiteral(s string) bool {
	if s == "" || len(s) > maxSubject {
		return false
	}
	tokenStart := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '.':
			if tokenStart {
				return false
			}
			tokenStart = true
			continue
		case '*', '>', ' ', '\t', '\r', '\n':
			return false
		}
		tokenStart = false
	}
	return !tokenStart
}

// isLiteral reports whether a filter has no wildcard tokens.
func isLiteral(filter string) bool {
	return filter != "" && filter != ">" && !strings.ContainsAny(filter, "*>")
}

// matchFilter reports whether subject matches filter, where "*" matches one
// token and a final ">" matches one or more. An empty filter matches all.
func matchFilter(filter, subject string) bool {
	if filter == "" || filter == ">" {
		return true
	}
	for {
		ft, frest, fmore := strings.Cut(filter, ".")
		st, srest, smore := strings.Cut(subject, ".")
		switch ft {
		case ">":
			return !fmore
		case "*":
		default:
			if ft != st {
				return false
			}
		}
		if !fmore || !smore {
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}
