package conf

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	natsconf "github.com/nats-io/nats-server/v2/conf"
)

// A .conf file is nats-server's own syntax (key: value, key = value or
// key value; blocks in braces; lists in brackets; include; $VARIABLES
// that name an earlier key or an environment variable; sizes such as 1GB),
// read with nats-server's own parser so that what it accepts, bus
// accepts. The parser gives strings, bools, int64 (a size already
// multiplied out), float64, time.Time (a Zulu date), []any and
// map[string]any with keys as written; durations ("10s") stay strings,
// as in a YAML file. What comes out is the same shape as a YAML file's
// settings, so the same keys and value setters apply (natskeys.go).

// maxConfDepth bounds how deeply blocks and lists may nest. No setting
// goes deeper than a handful of levels; the bound keeps unwrap's
// recursion, and so its stack, small whatever the input.
const maxConfDepth = 32

// confToken is what the parser's checked mode wraps every value in (its
// type is unexported). A variable definition that a $reference used is
// flagged, so that it is not taken for a setting, as nats-server skips it.
type confToken interface {
	Value() any
	IsUsedVariable() bool
}

// readConf parses the .conf file at path into nested maps, keys as
// written (readFile lowercases them; readRawBlock keeps them for the
// subjects of mappings and the names of accounts).
func readConf(path string) (map[string]any, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("conf: read config: %w", err)
	}
	budget := maxIncludes
	if err := checkIncludes(path, nil, &budget); err != nil {
		return nil, fmt.Errorf("conf: parse %s: %w", path, err)
	}
	top, err := parseConf(func() (map[string]any, error) { return natsconf.ParseFileWithChecks(path) })
	if err != nil {
		return nil, fmt.Errorf("conf: parse %s: %w", path, err)
	}
	return top, nil
}

// parseConf runs parse and unwraps its tokens. The parser is not ours: a
// panic in it on some input is turned into an error, since bad input
// must never crash the server.
func parseConf(parse func() (map[string]any, error)) (top map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			top, err = nil, fmt.Errorf("the config parser failed on this input: %v", r)
		}
	}()
	raw, err := parse()
	if err != nil {
		return nil, err
	}
	v, err := unwrap(raw, 0)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// unwrap replaces every token by its value, leaving out used variable
// definitions, and refuses nesting deeper than maxConfDepth.
func unwrap(v any, depth int) (any, error) {
	if depth > maxConfDepth {
		return nil, fmt.Errorf("blocks and lists nest more than %d deep", maxConfDepth)
	}
	if tk, ok := v.(confToken); ok {
		return unwrap(tk.Value(), depth)
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if tk, ok := e.(confToken); ok && tk.IsUsedVariable() {
				continue
			}
			u, err := unwrap(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = u
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			u, err := unwrap(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = u
		}
		return out, nil
	}
	return v, nil
}

// Limits on includes, which the parser follows without any: a file
// that includes itself recurses until the stack overflows, which no
// recover catches, and an include of /dev/zero reads forever.
const (
	maxIncludeDepth = 10
	maxIncludeSize  = 4 << 20
	// maxIncludes bounds the includes followed in all: a file that
	// includes another twice, which includes a third twice, … parses
	// 2^depth files.
	maxIncludes = 256
)

// includeRE finds what the parser's lexer takes for an include: the
// keyword as a key followed by blanks, then a quoted or bare path. It may
// find more (the word inside a string value); following a path that is
// not an include costs a stat and nothing else.
var includeRE = regexp.MustCompile(`(?i)(?:^|[\s{;,])include[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'|([^\s;}'"]+))`)

// includes lists the paths that text includes.
func includes(text string) []string {
	var out []string
	for _, m := range includeRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1]+m[2]+m[3])
	}
	return out
}

// checkIncludes walks the includes of the file at path, chain being the
// files that include it, and refuses a cycle, a chain deeper than
// maxIncludeDepth, more than maxIncludes in all (budget counts down), and
// an included file that is not a regular file of at most maxIncludeSize. A path that does not exist is left to the parser,
// which reports it.
func checkIncludes(path string, chain []string, budget *int) error {
	if *budget--; *budget < 0 {
		return fmt.Errorf("more than %d includes", maxIncludes)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if i := slices.Index(chain, abs); i >= 0 {
		return fmt.Errorf("include cycle: %s", strings.Join(append(chain[i:], abs), " includes "))
	}
	if len(chain) > maxIncludeDepth {
		return fmt.Errorf("includes nest more than %d deep at %s", maxIncludeDepth, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil // the parser says the file is missing
	}
	if !st.Mode().IsRegular() || st.Size() > maxIncludeSize {
		return fmt.Errorf("%s is not a regular file of at most %s", path, formatSize(maxIncludeSize))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil // as above
	}
	for _, inc := range includes(string(data)) {
		if err := checkIncludes(filepath.Join(filepath.Dir(path), inc), append(chain, abs), budget); err != nil {
			return err
		}
	}
	return nil
}

// lowerKeys returns m with every key lowercased, all the way down, as
// viper gives a YAML file's settings (nats-server's keys are
// case-insensitive).
func lowerKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = lowerValue(v)
	}
	return out
}

func lowerValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return lowerKeys(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lowerValue(e)
		}
		return out
	}
	return v
}
