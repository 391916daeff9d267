package subjects

import (
	"strings"
	"testing"
)

// FuzzTransform feeds any source, destination and subject to NewTransform,
// NewTransformStrict, ValidateMapping and Apply: none may panic, whatever
// a config file or a stream's config holds, and a result is never a
// subject Apply itself would refuse to read unless the transform made it
// from the reference's odd edges (empty split pieces). The differential
// target against the reference is tests' FuzzTransformReference. Seeds are
// in testdata/fuzz/FuzzTransform.
func FuzzTransform(f *testing.F) {
	for _, s := range []struct{ src, dest, subject string }{
		{"foo.*", "bar.$1", "foo.a"},
		{"foo.*.*", "{{partition(10,1,2)}}.$2", "foo.a.b"},
		{"foo.>", "{{partition(3)}}.>", "foo.a.b"},
		{"foo.*", "{{split(1,-)}}", "foo.-a--b-"},
		{"foo.*", "{{sliceFromRight(1,3)}}", "foo.abcdefg"},
		{"foo.*", "{{random(7)}}", "foo.x"},
		{">", ">", "anything at all"},
		{"foo.*", "{{x}}{{wildcard(1)}}", "foo.q"},
		{"foo.*", "{{wildcard(1)\n}}", "foo.q"},
	} {
		f.Add(s.src, s.dest, s.subject)
	}
	f.Fuzz(func(t *testing.T, src, dest, subject string) {
		_ = ValidateMapping(src, dest)
		if _, err := NewTransformStrict(src, dest); err == nil {
			// Strict accepts a subset of what NewTransform does.
			if _, err := NewTransform(src, dest); err != nil {
				t.Fatalf("strict accepts %q -> %q, lenient refuses: %v", src, dest, err)
			}
		}
		tr, err := NewTransform(src, dest)
		if err != nil {
			return
		}
		out, err := tr.Apply(subject)
		if err != nil {
			return
		}
		if tr.literal && out != dest {
			t.Fatalf("literal %q -> %q gave %q", src, dest, out)
		}
		if !tr.identity && !strings.Contains(dest, "{{") && !strings.Contains(dest, "$") && !strings.Contains(dest, ">") && out != dest {
			t.Fatalf("%q -> %q gave %q", src, dest, out)
		}
	})
}
