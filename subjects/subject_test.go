package subjects

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// validityCases are subject edge cases with what the reference server says
// about them: subscribe is IsValidSubject (what SUB accepts), publish is
// IsValidPublishSubject (IsValidSubject plus no wildcard token).
var validityCases = []struct {
	name      string
	subject   string
	subscribe bool
	publish   bool
}{
	{"single_token", "foo", true, true},
	{"two_tokens", "foo.bar", true, true},
	{"many_tokens", "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r", true, true},
	{"partial_wildcard_last", "foo.*", true, false},
	{"partial_wildcard_first", "*.bar", true, false},
	{"partial_wildcard_alone", "*", true, false},
	{"partial_wildcard_twice", "*.*", true, false},
	{"full_wildcard_alone", ">", true, false},
	{"full_wildcard_last", "foo.>", true, false},
	{"partial_then_full", "foo.*.>", true, false},
	{"full_wildcard_not_last", "foo.>.bar", false, false},
	{"full_wildcard_twice", ">.>", false, false},
	{"full_wildcard_middle", "a.>.b", false, false},
	{"jetstream_consumer_create", "$JS.API.CONSUMER.CREATE.S.C.orders.>", true, false},
	{"inbox_wildcard", "_INBOX.abc.*", true, false},
	{"inbox_literal", "_INBOX.abc.def", true, true},
	{"dollar_sys", "$SYS.REQ.SERVER.PING", true, true},
	{"star_inside_token", "fo*", true, true},
	{"star_prefix_token", "*bar", true, true},
	{"gt_inside_token", "a>b", true, true},
	{"gt_suffix_token", "foo>", true, true},
	{"double_star_token", "foo.**.bar", true, true},
	{"double_gt_token", "foo.>>", true, true},
	{"gt_token_then_more", "foo.>>.bar", true, true},
	{"empty", "", false, false},
	{"only_dot", ".", false, false},
	{"two_dots", "..", false, false},
	{"leading_dot", ".foo", false, false},
	{"trailing_dot", "foo.", false, false},
	{"double_dot", "foo..bar", false, false},
	{"trailing_dot_after_wildcard", "foo.*.", false, false},
	{"trailing_dot_after_full", "foo.>.", false, false},
	{"space_inside", "foo bar", false, false},
	{"space_token", "foo. .bar", false, false},
	{"leading_space", " foo", false, false},
	{"trailing_space", "foo ", false, false},
	{"tab", "foo\tbar", false, false},
	{"tab_token", "foo.\t", false, false},
	{"newline", "foo\nbar", false, false},
	{"carriage_return", "foo\r", false, false},
	{"crlf_token", "foo.\r\n", false, false},
	{"form_feed", "foo\fbar", false, false},
	{"form_feed_token", "\f", false, false},
	{"vertical_tab_is_legal", "foo\vbar", true, true},
	{"nul_is_legal", "foo\x00bar", true, true},
	{"invalid_utf8_is_legal", "foo.\xff\xfe", true, true},
	{"non_ascii_space_is_legal", "foo\u3000bar", true, true},
	{"utf8_tokens", "café.über.*", true, false},
}

func TestValidSubject(t *testing.T) {
	t.Parallel()
	for _, tc := range validityCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidSubject(tc.subject); got != tc.subscribe {
				t.Errorf("ValidSubject(%q) = %v, want %v", tc.subject, got, tc.subscribe)
			}
			if got := ValidSubjectBytes([]byte(tc.subject)); got != tc.subscribe {
				t.Errorf("ValidSubjectBytes(%q) = %v, want %v", tc.subject, got, tc.subscribe)
			}
			if got := ValidLiteral(tc.subject); got != tc.publish {
				t.Errorf("ValidLiteral(%q) = %v, want %v", tc.subject, got, tc.publish)
			}
			if got := ValidLiteralBytes([]byte(tc.subject)); got != tc.publish {
				t.Errorf("ValidLiteralBytes(%q) = %v, want %v", tc.subject, got, tc.publish)
			}
			// The table itself must say what the reference says.
			if ref := server.IsValidSubject(tc.subject); ref != tc.subscribe {
				t.Errorf("reference IsValidSubject(%q) = %v, table says %v", tc.subject, ref, tc.subscribe)
			}
			if ref := server.IsValidPublishSubject(tc.subject); ref != tc.publish {
				t.Errorf("reference IsValidPublishSubject(%q) = %v, table says %v", tc.subject, ref, tc.publish)
			}
		})
	}
}

// TestValidLiteralWhitespace pins a deliberate difference: the reference's
// IsValidLiteralSubject (what its pedantic PUB check calls) only looks at
// empty and wildcard tokens, so it accepts "foo bar". On the wire a PUB
// subject can never hold a space or tab (they separate arguments), so the
// difference is unobservable there; ValidLiteral follows the stricter
// IsValidPublishSubject.
func TestValidLiteralWhitespace(t *testing.T) {
	t.Parallel()
	const subject = "foo bar"
	if !server.IsValidLiteralSubject(subject) {
		t.Fatalf("reference IsValidLiteralSubject(%q) changed to false; revisit ValidLiteral", subject)
	}
	if ValidLiteral(subject) {
		t.Errorf("ValidLiteral(%q) = true, want false", subject)
	}
}

func TestValidQueue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		queue string
		want  bool
	}{
		{"simple", "workers", true},
		{"dots_are_fine", "svc.workers", true},
		{"wildcard_chars_are_fine", "*", true},
		{"full_wildcard_char_is_fine", ">", true},
		{"empty_dots_are_fine", "a..b", true},
		{"empty", "", false},
		{"space", "my workers", false},
		{"tab", "q\t", false},
		{"newline", "q\n", false},
		{"carriage_return", "\rq", false},
		{"form_feed", "q\f", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidQueue(tc.queue); got != tc.want {
				t.Errorf("ValidQueue(%q) = %v, want %v", tc.queue, got, tc.want)
			}
			if got := ValidQueueBytes([]byte(tc.queue)); got != tc.want {
				t.Errorf("ValidQueueBytes(%q) = %v, want %v", tc.queue, got, tc.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, subject string
		want             bool
	}{
		{"foo", "foo", true},
		{"foo", "bar", false},
		{"foo", "foo.bar", false},
		{"foo.bar", "foo", false},
		{"*", "foo", true},
		{"*", "foo.bar", false},
		{">", "foo", true},
		{">", "foo.bar.baz", true},
		{"foo.>", "foo", false},
		{"foo.>", "foo.bar", true},
		{"foo.*", "foo.bar", true},
		{"foo.*", "foo.bar.baz", false},
		{"stats.*.*", "stats.test.22", true},
		{"stats.*.*.foos", "stats.test.foos", false},
		{"foo*", "foo*", true},
		{"foo*", "fooX", false},
		{"foo.***.bar", "foo.***.bar", true},
		{"foo.>>>.bar", "foo.>>>.bar", true},
		// Literal wildcard tokens in a published subject.
		{"foo.*", "foo.*", true},
		{"foo.>", "foo.>", true},
		{">", "$JS.API.CONSUMER.CREATE.S.C.orders.>", true},
		{"foo.bar", "foo.*", false},
		// Published subjects with empty tokens match nothing.
		{">", "foo..bar", false},
		{">", ".foo", false},
		{"*", "", false},
		{"foo.>", "foo.", false},
		// Invalid patterns match nothing.
		{"", "", false},
		{"foo.>.bar", "foo.x.bar", false},
		{"foo..bar", "foo..bar", false},
	}
	for _, tc := range tests {
		if got := Matches(tc.pattern, tc.subject); got != tc.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tc.pattern, tc.subject, got, tc.want)
		}
	}
}

func TestValidBytesDoNotAllocate(t *testing.T) {
	subject := []byte("$JS.API.CONSUMER.CREATE.S.C.orders.>")
	allocs := testing.AllocsPerRun(100, func() {
		ValidSubjectBytes(subject)
		ValidLiteralBytes(subject)
		ValidQueueBytes(subject)
	})
	if allocs != 0 {
		t.Errorf("got %v allocs per run, want 0", allocs)
	}
}

func BenchmarkValidLiteralBytes(b *testing.B) {
	subject := []byte("$JS.API.CONSUMER.CREATE.ORDERS.bKIIG11Z.orders.created")
	b.ReportAllocs()
	b.SetBytes(int64(len(subject)))
	for b.Loop() {
		ValidLiteralBytes(subject)
	}
}
