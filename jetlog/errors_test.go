package jetlog

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// Everything absent is ErrNotFound, wrapped with the operation and the
// input that was not found.
func TestNotFoundConvention(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l := openLog(t, dir, StreamConfig{Name: "S"}, Options{})
	mustAppend(t, l, "a", "1")
	mustAppend(t, l, "b", "2")
	if err := l.Delete(2); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		err   error
		input string // must appear in the message
	}{
		{"get", func() error { _, err := l.Get(2); return err }(), "2"},
		{"get beyond last", func() error { _, err := l.Get(99); return err }(), "99"},
		{"next", func() error { _, err := l.Next(2, "a"); return err }(), `"a"`},
		{"next matching", func() error { _, err := l.Next(1, []string{"x", "y.*"}...); return err }(), `"y.*"`},
		{"last by subject", func() error { _, err := l.LastBySubject("b"); return err }(), `"b"`},
		{"delete", l.Delete(2), "2"},
		{"load config", func() error { _, _, err := LoadConfig(nil, dir+"/none"); return err }(), "none"},
		{"load consumer config", func() error { _, err := l.LoadConsumerConfig("C"); return err }(), `"C"`},
		{"delete consumer", l.DeleteConsumer("C"), `"C"`},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNotFound", tc.name, tc.err)
			continue
		}
		if !strings.Contains(tc.err.Error(), tc.input) || !strings.HasPrefix(tc.err.Error(), "jetlog: ") {
			t.Errorf("%s: %q does not name the op and %s", tc.name, tc.err, tc.input)
		}
	}
	// A missing config still matches fs.ErrNotExist, as callers check.
	if _, _, err := LoadConfig(nil, dir+"/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadConfig of a missing stream = %v, want fs.ErrNotExist too", err)
	}
}
