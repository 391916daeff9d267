package tests

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// cliDirectScenario subscribes with the nats CLI through batch direct
// gets (--direct, and --last-per-subject, which asks with multi_last)
// and returns what it printed, times left out.
func cliDirectScenario(t *testing.T, bin, url string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	run := func(args ...string) {
		t.Helper()
		o, err := runCLI(t, ctx, bin, url, args...)
		if err != nil {
			out = append(out, fmt.Sprintf("nats %s: %v", strings.Join(args, " "), err))
		}
		out = append(out, "nats "+strings.Join(args, " ")+":")
		var headers []string // printed in map order: compared sorted
		for _, line := range strings.Split(o, "\n") {
			line = cliTime.ReplaceAllString(strings.TrimRight(line, "\r"), "<time>")
			if cliHeader.MatchString(line) {
				headers = append(headers, line)
				continue
			}
			slices.Sort(headers)
			out = append(append(out, headers...), line)
			headers = nil
		}
	}
	setup := func(args ...string) {
		t.Helper()
		if o, err := runCLI(t, ctx, bin, url, args...); err != nil {
			t.Fatalf("nats %s: %v\n%s", strings.Join(args, " "), err, o)
		}
	}
	setup("stream", "add", "D", "--subjects", "d.>", "--allow-direct", "--defaults")
	for i, subj := range []string{"d.a", "d.b", "d.a", "d.c", "d.b"} {
		setup("pub", subj, fmt.Sprintf("m%d", i+1), "--jetstream")
	}
	run("sub", "d.>", "--stream", "D", "--direct", "--all", "--count", "5")
	// It pages by up_to_seq and, past the stream's end, gets no results
	// from then on (the reference's file store): it stops at --wait.
	run("sub", "d.>", "--stream", "D", "--direct", "--last-per-subject", "--count", "3", "--wait", "2s")
	return out
}

var (
	cliTime   = regexp.MustCompile(`\d\d:\d\d:\d\d(\.\d+)?|\d{4}-\d\d-\d\dT[^ ]*`)
	cliHeader = regexp.MustCompile(`^[A-Za-z-]+: `)
)

// TestNatsCLIDirectBatchMatchesReference: `nats sub --direct` reads a
// stream with batch direct gets and --last-per-subject with multi_last
// ones; against bus it prints what it prints against the reference.
func TestNatsCLIDirectBatchMatchesReference(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	want := cliDirectScenario(t, bin, "nats://"+refAddr(startReference(t, true)))
	got := cliDirectScenario(t, bin, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, want, got)
}
