package conf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// writeConfig writes content to a file called name in a new temp dir and
// returns its path.
func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// parseFlags returns a flag set with AddFlags applied and args parsed.
func parseFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("bus", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %q: %v", args, err)
	}
	return fs
}

// keyErrors unpacks the error from Load into its *KeyErrors, failing the
// test for any other kind of error.
func keyErrors(t *testing.T, err error) []*KeyError {
	t.Helper()
	var all []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		all = joined.Unwrap()
	} else if err != nil {
		all = []error{err}
	}
	out := make([]*KeyError, 0, len(all))
	for _, e := range all {
		var ke *KeyError
		if !errors.As(e, &ke) {
			t.Fatalf("error %v is not a *KeyError", e)
		}
		out = append(out, ke)
	}
	return out
}
