package mqtt

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/bus-dev/bus/subjects"
)

// Topic ↔ subject mapping, the reference server's, so that MQTT and NATS
// clients meet on the same subjects with either server:
//
//   - a level separator '/' becomes the token separator '.', except that
//     an empty level (a leading '/', "//", a trailing '/') is written as a
//     token "/" so that no subject token is ever empty: "/a" → "/.a",
//     "a//b" → "a./.b", "a/" → "a./";
//   - a '.' inside a level, which NATS would read as a separator, becomes
//     "//": "v1.2/x" → "v1//2.x";
//   - in filters, a level "+" becomes "*" and a level "#" becomes ">",
//     and "a/#" is subscribed as both "a.>" and "a" (MQTT's '#' also
//     matches the parent level, NATS's '>' does not);
//   - whitespace and DEL cannot be carried and are refused.
//
// bus refuses, where the reference passes them on, what would change
// meaning on the way: a level "*" or ">" in a topic (it would become a
// NATS wildcard), a '+' or '#' that is not a whole level, a '#' that is
// not last, and any topic or filter that lands in the server's own
// $MQTT. namespace (CVE-2026-33217 was permissions not applied there).

// Errors of the mapping; each names the rule the topic broke.
var (
	ErrEmptyTopic    = errors.New("mqtt: empty topic")
	ErrBadCharacter  = errors.New("mqtt: whitespace or DEL in topic")
	ErrWildcardTopic = errors.New("mqtt: wildcard in topic name")
	ErrBadWildcard   = errors.New("mqtt: '+' or '#' not a whole level, or '#' not last")
	ErrNATSWildcard  = errors.New("mqtt: level \"*\" or \">\" would be a NATS wildcard")
	ErrReserved      = errors.New("mqtt: topic in the server's $MQTT namespace")
)

// ReservedPrefix is the subject prefix of the listener's own traffic
// (session, retained and JetStream API subjects), out of bounds to MQTT
// clients whatever their permissions say.
const ReservedPrefix = "$MQTT."

// TopicToSubject appends the subject of a topic name (PUBLISH, will).
// It does not allocate when dst has room.
func TopicToSubject(dst, topic []byte) ([]byte, error) {
	return convert(dst, topic, false)
}

// FilterToSubject appends the subject of a topic filter. parent is how
// many bytes of the result make the extra subject "a/#" needs for its
// parent level "a" (0 when there is none): subscribe to subj and, when
// parent > 0, to subj[:parent] as well.
func FilterToSubject(dst, filter []byte) (subj []byte, parent int, err error) {
	start := len(dst)
	subj, err = convert(dst, filter, true)
	if err != nil {
		return dst, 0, err
	}
	s := subj[start:]
	if len(s) > 2 && s[len(s)-1] == '>' && s[len(s)-2] == '.' {
		parent = len(subj) - 2
	}
	return subj, parent, nil
}

func convert(dst, topic []byte, filter bool) ([]byte, error) {
	if len(topic) == 0 {
		return dst, ErrEmptyTopic
	}
	start := len(dst)
	levelStart := 0
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		switch c {
		case '/':
			if err := checkLevel(topic[levelStart:i], filter, false); err != nil {
				return dst[:start], err
			}
			levelStart = i + 1
			last := len(dst) > start && dst[len(dst)-1] == '.'
			switch {
			case i == 0 || last:
				dst = append(dst, '/', '.')
			case i == len(topic)-1 || topic[i+1] == '/':
				dst = append(dst, '.', '/')
			default:
				dst = append(dst, '.')
			}
		case ' ', '\t', '\n', '\r', '\f', 0x7f:
			return dst[:start], fmt.Errorf("%w: %q", ErrBadCharacter, topic)
		case '.':
			dst = append(dst, '/', '/')
		case '+':
			dst = append(dst, '*')
		case '#':
			dst = append(dst, '>')
		default:
			dst = append(dst, c)
		}
	}
	if err := checkLevel(topic[levelStart:], filter, true); err != nil {
		return dst[:start], err
	}
	if dst[len(dst)-1] == '.' {
		dst = append(dst, '/')
	}
	subj := dst[start:]
	if bytes.HasPrefix(subj, []byte(ReservedPrefix)) {
		return dst[:start], fmt.Errorf("%w: %q", ErrReserved, topic)
	}
	valid := subjects.ValidLiteralBytes
	if filter {
		valid = subjects.ValidSubjectBytes
	}
	if !valid(subj) {
		// Every rule above keeps tokens non-empty and free of
		// whitespace; reaching here would be a bug in this mapping.
		return dst[:start], fmt.Errorf("mqtt: topic %q mapped to invalid subject %q", topic, subj)
	}
	return dst, nil
}

// checkLevel applies the wildcard rules of section 4.7.1 to one level.
func checkLevel(level []byte, filter, last bool) error {
	if len(level) == 1 && (level[0] == '*' || level[0] == '>') {
		return fmt.Errorf("%w: %q", ErrNATSWildcard, level)
	}
	if !filter {
		if bytes.ContainsAny(level, "+#") {
			return fmt.Errorf("%w: %q", ErrWildcardTopic, level)
		}
		return nil
	}
	for _, c := range level {
		if c != '+' && c != '#' {
			continue
		}
		if len(level) != 1 || (c == '#' && !last) {
			return fmt.Errorf("%w: %q", ErrBadWildcard, level)
		}
	}
	return nil
}

// SubjectToTopic appends the topic of a subject, the inverse of
// TopicToSubject for every subject it makes; a subject published by a
// NATS client maps as if it had been made that way.
func SubjectToTopic(dst []byte, subject string) []byte {
	for i := 0; i < len(subject); i++ {
		switch c := subject[i]; c {
		case '.':
			dst = append(dst, '/')
		case '/':
			if i+1 < len(subject) {
				switch subject[i+1] {
				case '.':
					dst = append(dst, '/')
					i++
				case '/':
					dst = append(dst, '.')
					i++
				}
			}
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
