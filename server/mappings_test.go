package server

import (
	"testing"
)

func mustMapper(t testing.TB, ms ...Mapping) *mapper {
	t.Helper()
	m, err := newMapper(ms)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func one(src, dest string) Mapping {
	return Mapping{Source: src, Destinations: []MapDestination{{Subject: dest, Weight: 100}}}
}

func TestMapperNoneIsNil(t *testing.T) {
	t.Parallel()
	if m := mustMapper(t); m != nil {
		t.Fatalf("newMapper(nil) = %v, want nil (no cost per publish)", m)
	}
}

// The most specific source wins when several match: literal over "*"
// over ">", token by token.
func TestMapperMostSpecific(t *testing.T) {
	t.Parallel()
	m := mustMapper(t, one("a.>", "any.>"), one("a.*", "star.$1"), one("a.b", "literal"), one("*.b", "first.$1"), one("a.*.>", "deeper.$1.>"))
	for subject, want := range map[string]string{
		"a.b":   "literal",
		"a.c":   "star.c",
		"x.b":   "first.x",
		"a.c.d": "deeper.c.d",
		"q":     "q",
		"a.*":   "a.*", // the transform refuses wildcard tokens: unchanged
	} {
		if got := string(m.apply([]byte(subject))); got != want {
			t.Errorf("apply(%q) = %q, want %q", subject, got, want)
		}
	}
}

func TestMapperDropsWhenSourceListed(t *testing.T) {
	t.Parallel()
	m := mustMapper(t, Mapping{Source: "a", Destinations: []MapDestination{{Subject: "a", Weight: 0}}})
	for range 100 {
		if got := m.apply([]byte("a")); len(got) != 0 {
			t.Fatalf("apply = %q, want a drop", got)
		}
	}
}

// TestMapperApplyAllocs: an unmapped subject costs no allocation, a mapped
// one only its new subject. see BenchmarkMapperApply
func TestMapperApplyAllocs(t *testing.T) {
	m := mustMapper(t, one("orders.*", "orders.{{partition(8,1)}}.$1"), one("keep.*", "keep.$1"))
	for subject, want := range map[string]float64{"other.x": 0, "orders.alice": 1} {
		b := []byte(subject)
		if got := testing.AllocsPerRun(100, func() { m.apply(b) }); got > want {
			t.Errorf("apply(%q) allocates %v times, want %v", subject, got, want)
		}
	}
}

func BenchmarkMapperApply(b *testing.B) {
	m := mustMapper(b, one("orders.*", "orders.{{partition(8,1)}}.$1"))
	for _, subject := range []string{"other.x", "orders.alice"} {
		s := []byte(subject)
		b.Run(subject, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.apply(s)
			}
		})
	}
}
