package conf

import (
	"errors"
	"fmt"
)

// Sentinels carried by every *KeyError; compare with errors.Is.
var (
	// ErrUnknownKey is a file key or BUS_* environment variable that names no
	// setting, usually a typo.
	ErrUnknownKey = errors.New("conf: unknown key")
	// ErrDuplicateKey is a key set twice in one file under two names,
	// such as ping_max and max_pings_out.
	ErrDuplicateKey = errors.New("conf: duplicate key")
	// ErrBadValue is a value of the wrong type or that does not parse, such
	// as "abc" for a size.
	ErrBadValue = errors.New("conf: bad value")
	// ErrUnsupportedKey is a nats-server key that bus does not implement,
	// such as cluster or trace: true. Reason says why and what to do
	// instead; the key is refused rather than silently doing nothing.
	ErrUnsupportedKey = errors.New("conf: key not supported")
	// ErrOutOfRange is a well-formed value outside the key's allowed range,
	// such as port 70000.
	ErrOutOfRange = errors.New("conf: value out of range")
)

// KeyError describes one problem with one key.
type KeyError struct {
	// Key as the user wrote it: "max_payload", or for an unknown key the
	// misspelling ("prot", "BUS_PROT").
	Key string
	// Source says where the value came from: "file bus.yaml",
	// "env BUS_PORT", "flag --port", "environment" for an unknown variable,
	// or "" when the value is a default or came from a Config passed to
	// Validate.
	Source string
	// Reason says what is wrong (`"abc" is not a size`). For an unknown key
	// it is a hint such as `did you mean "port"?`, or empty.
	Reason string
	Err    error // ErrUnknownKey, ErrDuplicateKey, ErrUnsupportedKey, ErrBadValue or ErrOutOfRange
}

func (e *KeyError) Error() string {
	if errors.Is(e.Err, ErrUnknownKey) {
		msg := fmt.Sprintf("conf: unknown key %q", e.Key)
		if e.Source != "" {
			msg += " in " + e.Source
		}
		if e.Reason != "" {
			msg += " (" + e.Reason + ")"
		}
		return msg
	}
	msg := "conf: " + e.Key + ": " + e.Reason
	if e.Source != "" {
		msg += " (from " + e.Source + ")"
	}
	return msg
}

func (e *KeyError) Unwrap() error { return e.Err }

// join returns nil for no errors, the error itself for one, and errors.Join
// otherwise, which prints one problem per line.
func join(errs []*KeyError) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	all := make([]error, len(errs))
	for i, err := range errs {
		all[i] = err
	}
	return errors.Join(all...)
}
