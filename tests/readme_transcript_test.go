package tests

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeBlock is one fenced block of a README section: its language tag
// ("yaml", or "" for a shell transcript) and its text.
type readmeBlock struct{ lang, text string }

var fencedBlock = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```")

// readmeBlocks are the fenced blocks of a README section, in order.
func readmeBlocks(t *testing.T, heading string) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	for _, m := range fencedBlock.FindAllStringSubmatch(readmeSection(t, heading), -1) {
		blocks = append(blocks, readmeBlock{lang: m[1], text: m[2]})
	}
	return blocks
}

// transcriptStep is one `$ command` line of a README transcript and the
// output lines the README shows under it.
type transcriptStep struct {
	command string
	output  []string
	// alternatives are, for a shown line, the start of another line
	// the README's prose says the command may print instead.
	alternatives map[string]string
}

func transcript(text string) []transcriptStep {
	var steps []transcriptStep
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, transcriptStep{command: cmd})
		} else if len(steps) > 0 {
			steps[len(steps)-1].output = append(steps[len(steps)-1].output, line)
		}
	}
	return steps
}

// clockPrefix is the time of day the nats CLI starts its lines with,
// which the README leaves out.
var clockPrefix = regexp.MustCompile(`^\d\d:\d\d:\d\d `)

// shownInOrder reports whether every line the README shows is a line of
// out, in the same order. The README leaves out what a command prints
// that a reader does not need (nats stream add's whole stream report, the
// delivery line above a consumer next's payload) and the CLI's clock
// time at the start of a line, so it is a subsequence, but each line it
// does show is exact.
func shownInOrder(step transcriptStep, out string) bool {
	lines := strings.Split(out, "\n")
	matches := func(line, want string) bool {
		line = clockPrefix.ReplaceAllString(strings.TrimRight(line, " \r"), "")
		alt, ok := step.alternatives[want]
		return line == want || ok && strings.HasPrefix(line, alt)
	}
	i := 0
	for _, want := range step.output {
		for i < len(lines) && !matches(lines[i], want) {
			i++
		}
		if i == len(lines) {
			return false
		}
		i++
	}
	return true
}

// runNATSStep runs a transcript's `nats …` command (its words after
// "nats", with replace applied to each) with the real nats CLI against
// url (unless it names its own -s), and checks that it fails exactly when the README shows an error,
// and that it prints the lines the README shows.
func runNATSStep(t *testing.T, ctx context.Context, bin, url string, step transcriptStep, replace *strings.Replacer) {
	t.Helper()
	args := shellWords(t, strings.TrimPrefix(step.command, "nats "))
	for i := range args {
		args[i] = replace.Replace(args[i])
	}
	if !slices.Contains(args, "-s") {
		args = append([]string{"-s", url}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--no-context"}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	b, err := cmd.CombinedOutput()
	out := string(b)
	wantErr := false
	for _, l := range step.output {
		wantErr = wantErr || strings.HasPrefix(l, "nats: ")
	}
	if (err != nil) != wantErr {
		t.Errorf("$ %s: err %v, README shows an error: %v; output:\n%s", step.command, err, wantErr, out)
	}
	if !shownInOrder(step, out) {
		t.Errorf("$ %s: the README shows\n%s\nbut nats printed\n%s", step.command, strings.Join(step.output, "\n"), out)
	}
}

// runShell runs a README command that is not the nats CLI's (bus itself,
// with its stdin) and returns what it printed on stdout.
func runShell(t *testing.T, ctx context.Context, stdin string, argv ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = os.Environ()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	return string(out)
}
