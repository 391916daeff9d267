package subjects

import (
	"math"
	"strconv"
	"strings"
)

// A destination token's parse: what it computes and from what. The reading
// of a {{...}} token follows the reference's regular expressions exactly
// (see findCall), so that every destination it accepts or refuses, we do.

// fn is what a destination token computes.
type fn uint8

const (
	fnLiteral        fn = iota // the token itself
	fnWildcard                 // a wildcard's token: {{wildcard(n)}}, $n
	fnPartition                // {{partition(n[, i...])}}: a bucket by hash
	fnSplitFromLeft            // {{splitFromLeft(i, n)}}
	fnSplitFromRight           // {{splitFromRight(i, n)}}
	fnSliceFromLeft            // {{sliceFromLeft(i, n)}}
	fnSliceFromRight           // {{sliceFromRight(i, n)}}
	fnSplit                    // {{split(i, sep)}}
	fnLeft                     // {{left(i, n)}}
	fnRight                    // {{right(i, n)}}
	fnRandom                   // {{random(n)}}
)

// part is one compiled destination token.
type part struct {
	fn      fn
	literal string // fnLiteral: the token
	// tokens are the wildcard numbers a function reads, as parsed; compile
	// turns them into indexes of subject tokens.
	tokens []int
	n      int32  // partition count, position, slice size or random ceiling
	sep    string // fnSplit: the separator, exactly as written
}

// functions are the {{...}} functions in the order the reference tries
// them; the first whose pattern occurs in a token decides. In a name an
// upper-case letter may be written in either case and a lower-case letter
// only as is: the reference accepts "SplitFromLeft" and "splitfromleft" but
// not "SPLITFROMLEFT".
var functions = [...]struct {
	name  string
	fn    fn
	parse func(args []string) (part, error)
}{
	{"Wildcard", fnWildcard, parseWildcard},
	{"Partition", fnPartition, parsePartition},
	{"SplitFromLeft", fnSplitFromLeft, parseIndexInt},
	{"SplitFromRight", fnSplitFromRight, parseIndexInt},
	{"SliceFromLeft", fnSliceFromLeft, parseIndexInt},
	{"SliceFromRight", fnSliceFromRight, parseIndexInt},
	{"Right", fnRight, parseIndexInt},
	{"Left", fnLeft, parseIndexInt},
	{"Split", fnSplit, parseSplit},
	{"Random", fnRandom, parseRandom},
}

// looksLikeFunction reports whether a destination token is read as a
// function call: longer than four bytes, starting "{{" and ending "}}".
func looksLikeFunction(tok string) bool {
	return len(tok) > 4 && strings.HasPrefix(tok, "{{") && strings.HasSuffix(tok, "}}")
}

// parsePart reads one destination token.
func parsePart(tok string) (part, error) {
	if len(tok) > 1 && tok[0] == '$' {
		// The legacy $n form. A '$' token that is not a number is a
		// literal: other subjects start with '$' too.
		n, err := strconv.Atoi(tok[1:])
		if err != nil {
			return part{fn: fnLiteral, literal: tok}, nil
		}
		return part{fn: fnWildcard, tokens: []int{n}}, nil
	}
	if !looksLikeFunction(tok) {
		return part{fn: fnLiteral, literal: tok}, nil
	}
	for _, f := range functions {
		inner, ok := findCall(tok, f.name)
		if !ok {
			continue
		}
		p, err := f.parse(splitArgs(inner))
		p.fn = f.fn
		return p, err
	}
	return part{}, ErrUnknownFunction
}

// findCall looks for name's call anywhere in tok, as the reference's
// unanchored pattern `{{\s*name\s*\((.*)\)\s*}}` does, and returns what is
// between the parentheses. Like that pattern it takes the leftmost "{{"
// where a call starts and, from there, the longest argument text that has
// no newline and is followed by ')', optional whitespace and "}}".
func findCall(tok, name string) (string, bool) {
	for start := strings.Index(tok, "{{"); start >= 0; {
		i := skipSpace(tok, start+2)
		if hasName(tok[i:], name) {
			i = skipSpace(tok, i+len(name))
			if i < len(tok) && tok[i] == '(' {
				if args, ok := lastClose(tok[i+1:]); ok {
					return args, true
				}
			}
		}
		next := strings.Index(tok[start+1:], "{{")
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return "", false
}

// lastClose returns the longest prefix of s without a newline that is
// followed by ')', optional whitespace and "}}".
func lastClose(s string) (string, bool) {
	end := len(s)
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		end = nl // the arguments stop at a newline; "\s*" after ')' may not
	}
	for i := end - 1; i >= 0; i-- {
		if s[i] != ')' {
			continue
		}
		j := skipSpace(s, i+1)
		if strings.HasPrefix(s[j:], "}}") {
			return s[:i], true
		}
	}
	return "", false
}

// isPatternSpace is the regular-expression class \s: tab, newline, form
// feed, carriage return and space (not vertical tab).
func isPatternSpace(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && isPatternSpace(s[i]) {
		i++
	}
	return i
}

// hasName reports whether s starts with name, where an upper-case letter
// of name matches either case and any other byte only itself.
func hasName(s, name string) bool {
	if len(s) < len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c, want := s[i], name[i]
		if c == want {
			continue
		}
		if 'A' <= want && want <= 'Z' && c == want+('a'-'A') {
			continue
		}
		return false
	}
	return true
}

// splitArgs splits a call's argument text at each comma, dropping the
// whitespace (\s) after it, as the reference does. Empty text is one empty
// argument.
func splitArgs(s string) []string {
	var args []string
	for {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			return append(args, s)
		}
		args = append(args, s[:i])
		s = s[skipSpace(s, i+1):]
	}
}

// atoi reads a decimal argument, ignoring spaces (only spaces) around it.
func atoi(arg string) (int, error) {
	return strconv.Atoi(strings.Trim(arg, " "))
}

func parseWildcard(args []string) (part, error) {
	if len(args) == 1 && args[0] == "" {
		return part{}, ErrNotEnoughArgs
	}
	if len(args) > 1 {
		return part{}, ErrTooManyArgs
	}
	n, err := atoi(args[0])
	if err != nil {
		return part{}, ErrInvalidArg
	}
	return part{tokens: []int{n}}, nil
}

func parsePartition(args []string) (part, error) {
	n, err := atoi(args[0])
	if err != nil || n > math.MaxInt32 {
		return part{}, ErrInvalidArg
	}
	p := part{n: int32(n)} // a count below MinInt32 wraps, as in the reference
	for _, arg := range args[1:] {
		i, err := atoi(arg)
		if err != nil {
			return part{}, ErrInvalidArg
		}
		p.tokens = append(p.tokens, i)
	}
	return p, nil
}

// parseIndexInt reads the (wildcard, number) arguments of the split, slice,
// left and right functions.
func parseIndexInt(args []string) (part, error) {
	switch {
	case len(args) < 2:
		return part{}, ErrNotEnoughArgs
	case len(args) > 2:
		return part{}, ErrTooManyArgs
	}
	i, err := atoi(args[0])
	if err != nil {
		return part{}, ErrInvalidArg
	}
	n, err := strconv.ParseInt(strings.Trim(args[1], " "), 10, 32)
	if err != nil {
		return part{}, ErrInvalidArg
	}
	return part{tokens: []int{i}, n: int32(n)}, nil
}

func parseSplit(args []string) (part, error) {
	switch {
	case len(args) < 2:
		return part{}, ErrNotEnoughArgs
	case len(args) > 2:
		return part{}, ErrTooManyArgs
	}
	i, err := atoi(args[0])
	if err != nil {
		return part{}, ErrInvalidArg
	}
	// The separator is taken as written, quotes included if any; it
	// cannot hold '.' (tokens are split on it first).
	if strings.ContainsAny(args[1], " .") {
		return part{}, ErrInvalidArg
	}
	return part{tokens: []int{i}, sep: args[1]}, nil
}

func parseRandom(args []string) (part, error) {
	if len(args) != 1 {
		return part{}, ErrNotEnoughArgs // the reference's error for any count
	}
	n, err := atoi(args[0])
	if err != nil || n > math.MaxInt32 {
		return part{}, ErrInvalidArg
	}
	return part{n: int32(n)}, nil
}
