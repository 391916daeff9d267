package mqtt

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bus-dev/bus/subjects"
)

// The reference server's mappings, checked against it with NATS
// subscribers in tests/mqtt_topic_diff_test.go.
var topicCases = []struct{ topic, subject string }{
	{"foo", "foo"},
	{"foo/bar", "foo.bar"},
	{"/foo", "/.foo"},
	{"foo/", "foo./"},
	{"foo//bar", "foo./.bar"},
	{"/", "/./"},
	{"//", "/././"},
	{"a///b", "a././.b"},
	{"v1.2/x", "v1//2.x"},
	{"a.b", "a//b"},
	{"$SYS/x", "$SYS.x"},
	{"é/ü", "é.ü"},
}

func TestTopicToSubject(t *testing.T) {
	for _, c := range topicCases {
		got, err := TopicToSubject(nil, []byte(c.topic))
		if err != nil || string(got) != c.subject {
			t.Errorf("TopicToSubject(%q) = %q, %v; want %q", c.topic, got, err, c.subject)
		}
		if back := SubjectToTopic(nil, c.subject); string(back) != c.topic {
			t.Errorf("SubjectToTopic(%q) = %q; want %q", c.subject, back, c.topic)
		}
	}
}

func TestTopicRefusals(t *testing.T) {
	cases := []struct {
		topic  string
		filter bool
		want   error
	}{
		{"", false, ErrEmptyTopic},
		{"", true, ErrEmptyTopic},
		{"a b", false, ErrBadCharacter},
		{"a\tb", true, ErrBadCharacter},
		{"a\x7f", false, ErrBadCharacter},
		{"a/+", false, ErrWildcardTopic},
		{"#", false, ErrWildcardTopic},
		{"a+/b", true, ErrBadWildcard},
		{"a/#/b", true, ErrBadWildcard},
		{"a/b#", true, ErrBadWildcard},
		{"a/*", false, ErrNATSWildcard},
		{"a/>", true, ErrNATSWildcard},
		{"$MQTT/sess/x", false, ErrReserved},
		{"$MQTT/#", true, ErrReserved},
		{"$MQTT/JSA/+/x", true, ErrReserved},
	}
	for _, c := range cases {
		var err error
		if c.filter {
			_, _, err = FilterToSubject(nil, []byte(c.topic))
		} else {
			_, err = TopicToSubject(nil, []byte(c.topic))
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%q (filter %v): err %v, want %v", c.topic, c.filter, err, c.want)
		}
	}
}

func TestFilterToSubject(t *testing.T) {
	cases := []struct{ filter, subject, parent string }{
		{"#", ">", ""},
		{"+", "*", ""},
		{"a/#", "a.>", "a"},
		{"a/+/c", "a.*.c", ""},
		{"/#", "/.>", "/"},
		{"+/+/#", "*.*.>", "*.*"},
		{"a.b/#", "a//b.>", "a//b"},
	}
	for _, c := range cases {
		got, parent, err := FilterToSubject(nil, []byte(c.filter))
		var p string
		if parent > 0 {
			p = string(got[:parent])
		}
		if err != nil || string(got) != c.subject || p != c.parent {
			t.Errorf("FilterToSubject(%q) = %q, parent %q, %v; want %q, %q", c.filter, got, p, err, c.subject, c.parent)
		}
	}
}

// mqttMatch is section 4.7's matching, level by level, written the
// obvious way: the model the mapping must agree with.
func mqttMatch(filter, topic string) bool {
	f, tl := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, fl := range f {
		if fl == "#" {
			return true // matches the parent level too
		}
		if i >= len(tl) {
			return false
		}
		if fl != "+" && fl != tl[i] {
			return false
		}
	}
	return len(f) == len(tl)
}

// TestTopicMappingModel: for random topics and filters over a small
// alphabet, NATS matching of the mapped subjects (with the parent
// subscription of "a/#") agrees with MQTT matching, and every subject
// maps back to its topic.
func TestTopicMappingModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(alphabet string, n int) string {
		var b strings.Builder
		for range 1 + rng.IntN(n) {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	checked := 0
	for range 200_000 {
		topic := gen("ab./", 6)
		filter := gen("ab./+#", 6)
		subj, err := TopicToSubject(nil, []byte(topic))
		if err != nil {
			t.Fatalf("topic %q: %v", topic, err)
		}
		if back := SubjectToTopic(nil, string(subj)); string(back) != topic {
			t.Fatalf("topic %q → %q → %q", topic, subj, back)
		}
		fsubj, parent, err := FilterToSubject(nil, []byte(filter))
		if err != nil {
			continue // not a valid filter; TestTopicRefusals covers those
		}
		checked++
		got := subjects.Matches(string(fsubj), string(subj)) ||
			(parent > 0 && subjects.Matches(string(fsubj[:parent]), string(subj)))
		if want := mqttMatch(filter, topic); got != want {
			t.Fatalf("filter %q (%q) vs topic %q (%q): NATS %v, MQTT %v", filter, fsubj, topic, subj, got, want)
		}
	}
	if checked < 10_000 {
		t.Fatalf("only %d valid filters generated", checked)
	}
}

func FuzzTopicMapping(f *testing.F) {
	for _, c := range topicCases {
		f.Add(c.topic)
	}
	f.Add("$MQTT/sess/#")
	f.Add("a/#/b")
	f.Fuzz(func(t *testing.T, topic string) {
		if subj, err := TopicToSubject(nil, []byte(topic)); err == nil {
			if !subjects.ValidLiteralBytes(subj) {
				t.Fatalf("%q → invalid subject %q", topic, subj)
			}
			if back := SubjectToTopic(nil, string(subj)); string(back) != topic {
				t.Fatalf("%q → %q → %q", topic, subj, back)
			}
		}
		if subj, parent, err := FilterToSubject(nil, []byte(topic)); err == nil {
			if !subjects.ValidSubjectBytes(subj) || (parent > 0 && !subjects.ValidSubjectBytes(subj[:parent])) {
				t.Fatalf("%q → invalid filter subject %q (parent %d)", topic, subj, parent)
			}
		}
	})
}

func BenchmarkTopicToSubject(b *testing.B) {
	b.ReportAllocs()
	topic := []byte("building/3/floor.2/sensor/temperature")
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf, _ = TopicToSubject(buf[:0], topic)
	}
}
