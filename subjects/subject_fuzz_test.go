package subjects

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// FuzzValidSubject holds our validation to the reference server's, byte for
// byte: ValidSubject to IsValidSubject, and ValidLiteral to
// IsValidPublishSubject (IsValidLiteralSubject ignores whitespace; see
// TestValidLiteralWhitespace). Seeds are in testdata/fuzz/FuzzValidSubject.
func FuzzValidSubject(f *testing.F) {
	for _, tc := range validityCases {
		f.Add(tc.subject)
	}
	f.Fuzz(func(t *testing.T, subject string) {
		want := server.IsValidSubject(subject)
		if got := ValidSubject(subject); got != want {
			t.Fatalf("ValidSubject(%q) = %v, reference says %v", subject, got, want)
		}
		if got := ValidSubjectBytes([]byte(subject)); got != want {
			t.Fatalf("ValidSubjectBytes(%q) = %v, reference says %v", subject, got, want)
		}
		wantLiteral := server.IsValidSubject(subject) && server.IsValidLiteralSubject(subject)
		if got := ValidLiteral(subject); got != wantLiteral {
			t.Fatalf("ValidLiteral(%q) = %v, reference says %v", subject, got, wantLiteral)
		}
		if got := ValidLiteralBytes([]byte(subject)); got != wantLiteral {
			t.Fatalf("ValidLiteralBytes(%q) = %v, reference says %v", subject, got, wantLiteral)
		}
		if pub := server.IsValidPublishSubject(subject); pub != wantLiteral {
			t.Fatalf("reference disagrees with itself on %q: IsValidPublishSubject = %v", subject, pub)
		}
		if ValidSubject(subject) {
			// Every valid subject matches itself once the wildcards are
			// read as literals, which is how a PUB of it is routed.
			if !Matches(subject, subject) {
				t.Fatalf("Matches(%q, itself) = false", subject)
			}
		}
	})
}
