package subjects

import (
	"errors"
	"fmt"
	"strings"
)

// A Transform rewrites a subject that matches its source pattern into a new
// subject described by its destination: the engine behind core subject
// mappings and behind JetStream's subject_transform, source and republish
// transforms. The destination syntax and every edge of its behaviour are the
// reference server's (nats-server's subject_transform.go); see
// docs/mappings.md for the forms.
//
// The destination is split on '.' into tokens. A token is one of:
//
//   - a literal, copied as is (">" as the last token copies the subject's
//     tokens from the source's ">" on);
//   - "$n" (n a decimal number): the subject token that the source's n-th
//     "*" matched, like {{wildcard(n)}};
//   - a function in double braces, {{name(args)}}: wildcard, partition,
//     splitFromLeft, splitFromRight, sliceFromLeft, sliceFromRight, split,
//     left, right and random. As in the reference, only the first letter of
//     each word of a name may be either case ("Wildcard", "SplitFromLeft").
//
// A Transform is immutable and safe for concurrent use.
type Transform struct {
	src, dest string
	srcTokens []string // src split on '.'
	parts     []part   // one per dest token
	// destFwc says dest ends in ">": the subject's tokens from index
	// tailFrom on (where src has its ">") are appended.
	destFwc  bool
	tailFrom int
	// identity says src and dest are both ">": Apply returns any subject
	// unchanged, as the reference does, without checking it.
	identity bool
	// literal says every part is a literal and dest has no ">": the result
	// is always dest.
	literal bool
}

// ErrBadTransform is wrapped by every error NewTransform and
// NewTransformStrict return for a destination they refuse; the sentinels
// below say why.
var ErrBadTransform = errors.New("subjects: invalid transform")

// Why a transform is refused. Each wraps ErrBadTransform; the error
// returned names the source, the destination and the offending token.
var (
	// ErrUnknownFunction: a {{...}} token names no known function.
	ErrUnknownFunction = fmt.Errorf("%w: unknown function", ErrBadTransform)
	// ErrNotEnoughArgs: a function got fewer arguments than it needs.
	ErrNotEnoughArgs = fmt.Errorf("%w: not enough arguments", ErrBadTransform)
	// ErrTooManyArgs: a function got more arguments than it takes.
	ErrTooManyArgs = fmt.Errorf("%w: too many arguments", ErrBadTransform)
	// ErrInvalidArg: an argument is not a number where one is needed, or
	// a split separator holds a space.
	ErrInvalidArg = fmt.Errorf("%w: invalid argument", ErrBadTransform)
	// ErrIndexOutOfRange: a wildcard index is beyond the source's "*"
	// tokens, or a function that reads a wildcard is used with a source
	// that has none.
	ErrIndexOutOfRange = fmt.Errorf("%w: wildcard index out of range", ErrBadTransform)
	// ErrUnusedWildcard: NewTransformStrict only, the destination does not
	// use every "*" of the source.
	ErrUnusedWildcard = fmt.Errorf("%w: not using all of the source's wildcards", ErrBadTransform)
	// ErrNotReversible: NewTransformStrict only, a function other than
	// wildcard (or $n) is used.
	ErrNotReversible = fmt.Errorf("%w: only {{wildcard(n)}} and $n are allowed here", ErrBadTransform)
	// ErrBadPattern: the source or destination is not a subject pattern
	// (an empty token, ">" not last), the destination has a "*" token, or
	// only one of them ends in ">".
	ErrBadPattern = fmt.Errorf("%w: bad source or destination subject", ErrBadTransform)
)

// ErrNoMatch is returned by Transform.Apply for a subject that does not
// match the transform's source, or that is not a literal subject (an empty
// token, or a token that is exactly "*" or ">").
var ErrNoMatch = errors.New("subjects: subject does not match the transform source")

// NewTransform compiles a transform from subjects matching src to dest. An
// empty src means ">". It returns an error wrapping ErrBadTransform (and one
// of the sentinels above) for anything the reference server's
// NewSubjectTransform refuses, and for an empty dest, which the reference
// treats as "no transform" and returns nil for: callers that accept an
// empty destination check for it first.
//
// Like the reference, NewTransform does not check src and dest for
// whitespace; ValidateMapping adds the checks the reference makes on
// mapping and stream transform destinations.
func NewTransform(src, dest string) (*Transform, error) {
	return compile(src, dest, lenient)
}

// NewTransformStrict is NewTransform for transforms that must be
// reversible, as the reference requires of import and export mappings: when
// src has wildcards, dest may only use {{wildcard(n)}} or $n, and must use
// as many wildcard references as src has "*" tokens.
func NewTransformStrict(src, dest string) (*Transform, error) {
	return compile(src, dest, strict)
}

// strictness selects NewTransform or NewTransformStrict's rules.
type strictness uint8

const (
	lenient strictness = iota
	strict
)

// Source returns the source pattern (">" when it was given as "").
func (t *Transform) Source() string { return t.src }

// Dest returns the destination as given.
func (t *Transform) Dest() string { return t.dest }

// String returns "src -> dest".
func (t *Transform) String() string { return t.src + " -> " + t.dest }

// compile is NewTransform and NewTransformStrict.
func compile(src, dest string, rule strictness) (*Transform, error) {
	if dest == "" {
		return nil, fmt.Errorf("subjects: transform %q to %q: empty destination: %w", src, dest, ErrBadPattern)
	}
	if src == "" {
		src = ">"
	}
	fail := func(token string, err error) error {
		return fmt.Errorf("subjects: transform %q to %q: %w in %q", src, dest, err, token)
	}
	stoks, spwcs, sfwc, ok := patternInfo(src)
	if !ok {
		return nil, fail(src, ErrBadPattern)
	}
	dtoks, dpwcs, dfwc, ok := patternInfo(dest)
	if !ok || dpwcs > 0 || sfwc != dfwc {
		return nil, fail(dest, ErrBadPattern)
	}

	// wildcardAt[n] is the index in src (and so in a matching subject) of
	// the n-th "*", for n from 1. An index of 0 or less is not refused by
	// the reference: it reads the subject's first token.
	wildcardAt := make([]int, 1, spwcs+1)
	for i, tok := range stoks {
		if tok == "*" {
			wildcardAt = append(wildcardAt, i)
		}
	}
	tokenAt := func(n int) int {
		if n <= 0 {
			return 0
		}
		return wildcardAt[n]
	}

	t := &Transform{
		src:       src,
		dest:      dest,
		srcTokens: stoks,
		parts:     make([]part, 0, len(dtoks)),
		destFwc:   dfwc,
		tailFrom:  len(stoks) - 1,
		identity:  src == ">" && dest == ">",
		literal:   !dfwc,
	}
	refs := 0 // wildcard references in dest, for the strict check
	for _, tok := range dtoks {
		p, err := parsePart(tok)
		if err != nil {
			return nil, fail(tok, err)
		}
		if p.fn != fnLiteral {
			t.literal = false
		}
		switch {
		case p.fn == fnLiteral:
		case spwcs == 0 && !sfwc:
			// A literal source: only functions that read no wildcard,
			// and partition forgets its token list (it hashes the whole
			// subject), as in the reference.
			if p.fn != fnPartition && p.fn != fnRandom {
				return nil, fail(tok, ErrIndexOutOfRange)
			}
			p.tokens = nil
		case rule == strict && p.fn != fnWildcard:
			return nil, fail(tok, ErrNotReversible)
		default:
			refs += len(p.tokens)
			for i, n := range p.tokens {
				if n > spwcs {
					return nil, fail(fmt.Sprintf("%s: [%d]", tok, n), ErrIndexOutOfRange)
				}
				p.tokens[i] = tokenAt(n)
			}
		}
		t.parts = append(t.parts, p)
	}
	if rule == strict && (spwcs > 0 || sfwc) && refs < spwcs {
		return nil, fail(dest, ErrUnusedWildcard)
	}
	return t, nil
}

// patternInfo splits a transform's source or destination on '.' and counts
// its "*" tokens. ok is false for an empty string, an empty token or a token
// after ">". Unlike ValidSubject it allows whitespace, as the reference does
// here.
func patternInfo(s string) (tokens []string, pwcs int, fwc, ok bool) {
	if s == "" {
		return nil, 0, false, false
	}
	tokens = strings.Split(s, ".")
	for _, tok := range tokens {
		if tok == "" || fwc {
			return nil, 0, false, false
		}
		switch tok {
		case ">":
			fwc = true
		case "*":
			pwcs++
		}
	}
	return tokens, pwcs, fwc, true
}

// ValidateMapping checks dest as a mapping or stream transform destination
// from src, as the reference checks those (its ValidateMapping): a literal
// destination token may hold no whitespace, and NewTransform must accept
// the pair. An empty dest is valid and means "no transform". The source is
// not checked for whitespace here; callers check it with ValidSubject.
func ValidateMapping(src, dest string) error {
	if dest == "" {
		return nil
	}
	sawFwc := false
	for tok := range strings.SplitSeq(dest, ".") {
		if tok == "" || sawFwc {
			return fmt.Errorf("subjects: transform %q to %q: %w in %q", src, dest, ErrBadPattern, tok)
		}
		if looksLikeFunction(tok) {
			if _, err := parsePart(tok); errors.Is(err, ErrUnknownFunction) {
				return fmt.Errorf("subjects: transform %q to %q: %w in %q", src, dest, err, tok)
			}
			continue
		}
		if tok == ">" {
			sawFwc = true
		} else if strings.ContainsAny(tok, "\t\n\f\r ") {
			return fmt.Errorf("subjects: transform %q to %q: whitespace: %w in %q", src, dest, ErrBadPattern, tok)
		}
	}
	_, err := NewTransform(src, dest)
	return err
}

// maxApplyTokens is how many subject tokens Apply splits without
// allocating; longer subjects work at the cost of an allocation.
const maxApplyTokens = 32

// Apply returns the subject that subject becomes, or an error wrapping
// ErrNoMatch if subject does not match the source or is not a literal
// subject. Like the reference it does not check subject for whitespace.
//
// When both source and destination are ">" the result is subject itself,
// unchecked; otherwise it is dest (for a destination without functions or
// ">") or a new string, so a subject made with unsafe over a reused buffer
// must not be passed to an identity transform if the result is kept.
// Apply allocates at most the result; see BenchmarkTransformApply.
func (t *Transform) Apply(subject string) (string, error) {
	if t.identity {
		return subject, nil
	}
	var buf [maxApplyTokens]string
	tokens := splitLiteral(subject, buf[:0])
	if tokens == nil || !t.matches(tokens) {
		return "", fmt.Errorf("subjects: apply %q to %q: %w", t.src, subject, ErrNoMatch)
	}
	if t.literal {
		return t.dest, nil
	}
	return t.build(subject, tokens), nil
}

// ApplyLiteral is Apply for a published subject whose tokens may be "*"
// or ">": they are taken as plain tokens, matched only by wildcards of
// the source, as the reference's imports map what a client publishes
// (nats.go's ordered consumer sends its filter, "$KV.b.>", inside its
// CONSUMER.CREATE subject, which an import of "$JS.API.>" must carry).
func (t *Transform) ApplyLiteral(subject string) (string, error) {
	if t.identity {
		return subject, nil
	}
	var buf [maxApplyTokens]string
	tokens := splitTokens(subject, buf[:0], true)
	if tokens == nil || !t.matches(tokens) {
		return "", fmt.Errorf("subjects: apply %q to %q: %w", t.src, subject, ErrNoMatch)
	}
	if t.literal {
		return t.dest, nil
	}
	return t.build(subject, tokens), nil
}

// splitLiteral appends the tokens of subject to tokens, or returns nil if
// one is empty or exactly "*" or ">".
func splitLiteral(subject string, tokens []string) []string {
	return splitTokens(subject, tokens, false)
}

// splitTokens appends the tokens of subject to tokens, or returns nil if one is
// empty, or, unless wildcards, exactly "*" or ">".
func splitTokens(subject string, tokens []string, wildcards bool) []string {
	for {
		tok, rest, more := strings.Cut(subject, ".")
		if tok == "" || !wildcards && (tok == "*" || tok == ">") {
			return nil
		}
		tokens = append(tokens, tok)
		if !more {
			return tokens
		}
		subject = rest
	}
}

// matches reports whether literal tokens match the source pattern. As in
// the reference, a source token that merely starts with '*' ("*x") matches
// any token here, though it is no wildcard for $n.
func (t *Transform) matches(tokens []string) bool {
	for i, p := range t.srcTokens {
		if i >= len(tokens) {
			return false
		}
		if p == ">" {
			return true
		}
		if p[0] != '*' && p != tokens[i] {
			return false
		}
	}
	return len(tokens) == len(t.srcTokens)
}

// build writes the destination for a matching subject split into tokens.
// It sizes the result first so that it allocates once.
func (t *Transform) build(subject string, tokens []string) string {
	size := len(t.parts) // separators, one too many
	for i := range t.parts {
		size += t.parts[i].maxLen(tokens)
	}
	var tail string
	if t.destFwc {
		tail = subject[tokenOffset(subject, t.tailFrom):]
		size += len(tail)
	}
	var b strings.Builder
	b.Grow(size)
	last := len(t.parts) - 1
	for i := range t.parts {
		p := &t.parts[i]
		if p.fn == fnLiteral && p.literal == ">" {
			break // the last token; the tail follows
		}
		p.write(&b, subject, tokens)
		if i < last {
			b.WriteByte('.')
		}
	}
	b.WriteString(tail)
	return b.String()
}

// tokenOffset returns the byte offset in subject of its n-th token (from 0).
func tokenOffset(subject string, n int) int {
	off := 0
	for ; n > 0; n-- {
		off += strings.IndexByte(subject[off:], '.') + 1
	}
	return off
}
