package conf

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// value decodes a raw setting into one Config field and formats the field
// back. The raw setting is whatever the source held: from a file a string,
// number, bool, list or map; from the environment or a flag always a string.
// set leaves the field untouched when it fails, and its error says what is
// wrong with the value without naming the key (the caller adds that).
type value interface {
	set(raw any) error
	String() string // the field, written as it could appear in a file
	kind() string   // the type shown in --help: "string", "int", "size", …
}

type stringValue struct{ p *string }

func (v stringValue) set(raw any) error {
	s, ok := raw.(string)
	if !ok {
		return fmt.Errorf("%s is not a string", describe(raw))
	}
	*v.p = s
	return nil
}

func (v stringValue) String() string { return *v.p }
func (v stringValue) kind() string   { return "string" }

type intValue struct{ p *int }

func (v intValue) set(raw any) error {
	n, ok := number(raw)
	if !ok || n > math.MaxInt || n < math.MinInt {
		return fmt.Errorf("%s is not an integer", describe(raw))
	}
	*v.p = int(n)
	return nil
}

func (v intValue) String() string { return strconv.Itoa(*v.p) }
func (v intValue) kind() string   { return "int" }

// sizeValue is a byte count; it parses exactly as intValue does, since
// nats-server accepts units on every number, but it formats with a unit.
type sizeValue struct{ p *int64 }

func (v sizeValue) set(raw any) error {
	n, ok := number(raw)
	if !ok {
		return fmt.Errorf("%s is not a size", describe(raw))
	}
	*v.p = n
	return nil
}

func (v sizeValue) String() string { return formatSize(*v.p) }
func (v sizeValue) kind() string   { return "size" }

type durationValue struct{ p *time.Duration }

func (v durationValue) set(raw any) error {
	d, ok := duration(raw)
	if !ok {
		return fmt.Errorf("%s is not a duration", describe(raw))
	}
	*v.p = d
	return nil
}

func (v durationValue) String() string { return formatDuration(*v.p) }
func (v durationValue) kind() string   { return "duration" }

// levelNames are the accepted log levels, lowest first.
func levelNames() []string { return []string{"debug", "info", "warn", "error"} }

type levelValue struct{ p *slog.Level }

func (v levelValue) set(raw any) error {
	s, _ := raw.(string)
	var l slog.Level
	// UnmarshalText also takes "info+2" and "WARN"; accept only the plain
	// names, in any case.
	if !slices.Contains(levelNames(), strings.ToLower(s)) || l.UnmarshalText([]byte(s)) != nil {
		return fmt.Errorf("%s is not one of %s", describe(raw), strings.Join(levelNames(), ", "))
	}
	*v.p = l
	return nil
}

func (v levelValue) String() string { return strings.ToLower(v.p.String()) }
func (v levelValue) kind() string   { return "level" }

// choiceValue is a string from a fixed list, matched without regard to case
// and stored as written in the list.
type choiceValue struct {
	p       *string
	choices []string
}

func (v choiceValue) set(raw any) error {
	s, _ := raw.(string)
	i := slices.IndexFunc(v.choices, func(c string) bool { return strings.EqualFold(c, s) })
	if i < 0 {
		return fmt.Errorf("%s is not one of %s", describe(raw), strings.Join(v.choices, ", "))
	}
	*v.p = v.choices[i]
	return nil
}

func (v choiceValue) String() string { return *v.p }
func (v choiceValue) kind() string   { return "string" }

// describe shows a raw setting in an error: strings quoted, so that spaces
// and empty values are visible; lists and maps by their shape.
func describe(raw any) string {
	switch v := raw.(type) {
	case string:
		return strconv.Quote(v)
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	case nil:
		return "an empty value"
	default:
		return fmt.Sprint(v)
	}
}

// boolValue takes true/false, and nats-server's enabled/disabled.
type boolValue struct{ p *bool }

func (v boolValue) set(raw any) error {
	switch x := raw.(type) {
	case bool:
		*v.p = x
		return nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "enabled", "on", "yes":
			*v.p = true
			return nil
		case "false", "disabled", "off", "no":
			*v.p = false
			return nil
		}
	}
	return fmt.Errorf("%s is not a boolean (true/false, enabled/disabled)", describe(raw))
}

func (v boolValue) String() string { return strconv.FormatBool(*v.p) }
func (v boolValue) kind() string   { return "bool" }
