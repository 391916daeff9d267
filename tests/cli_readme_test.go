package tests

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// readmeSection is the text of the README section under heading, up to
// the next heading.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q", heading)
	}
	text = text[i+len(heading)+2:]
	if j := regexp.MustCompile(`(?m)^#{2,3} `).FindStringIndex(text); j != nil {
		text = text[:j[0]]
	}
	return text
}

// readmeNATSCommands are the indented `nats …` lines of a section, split
// as a shell would (quotes, a trailing # comment), without the "nats".
func readmeNATSCommands(t *testing.T, heading string) [][]string {
	t.Helper()
	var cmds [][]string
	for _, line := range strings.Split(readmeSection(t, heading), "\n") {
		if !strings.HasPrefix(line, "    nats ") {
			continue
		}
		cmds = append(cmds, shellWords(t, strings.TrimPrefix(line, "    nats ")))
	}
	if len(cmds) == 0 {
		t.Fatalf("no nats commands under %q", heading)
	}
	return cmds
}

// readmeJetStreamSteps are the nats commands of "Persistent streams"
// that a test can run: all but stream view, which pages on a terminal
// only, which a test has not.
func readmeJetStreamSteps(t *testing.T) [][]string {
	t.Helper()
	var steps [][]string
	for _, args := range readmeNATSCommands(t, "## Persistent streams (JetStream API)") {
		if len(args) < 2 || args[0] != "stream" || args[1] != "view" {
			steps = append(steps, args)
		}
	}
	return steps
}

func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// The README's JetStream steps run in order, with the nats CLI, against
// one fresh bus: the streams and the billing consumer, the message-groups
// consumer of the Go snippet, the mirrors and sources (every stream they
// read is created first), nats stream report, and consumer pause.
func TestCLIReadmeJetStreamStepsRunInOrder(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	s := startBus(t, server.Options{JetStream: true})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := func(args []string) string {
		t.Helper()
		out, err := runCLI(t, ctx, bin, url, args...)
		if err != nil || strings.Contains(out, "nats: error") {
			t.Fatalf("nats %q: %v\n%s", args, err, out)
		}
		return out
	}
	for _, args := range readmeJetStreamSteps(t) {
		run(args)
	}

	// The message-groups snippet's request, as the README writes it.
	groups := readmeSection(t, "### Message groups")
	cfg := regexp.MustCompile("(?s)cfg := `(.*?)`").FindStringSubmatch(groups)
	subject := regexp.MustCompile(`nc\.Request\("([^"]+)"`).FindStringSubmatch(groups)
	if cfg == nil || subject == nil {
		t.Fatalf("no consumer request in the message-groups snippet:\n%s", groups)
	}
	nc := connect(t, url)
	msg, err := nc.Request(subject[1], []byte(cfg[1]), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil || resp.Error != nil {
		t.Fatalf("the message-groups consumer after the README's billing: %s", msg.Data)
	}

	added := map[string]bool{}
	for _, args := range readmeNATSCommands(t, "### Mirrors and sources") {
		if len(args) > 2 && args[0] == "stream" && args[1] == "add" {
			for i, a := range args {
				if (a == "--source" || a == "--mirror") && i+1 < len(args) && !added[args[i+1]] && args[i+1] != "ORDERS" {
					t.Errorf("nats %q reads %s, which the README has not created yet", args, args[i+1])
				}
			}
			added[args[2]] = true
		}
		out := run(args)
		if len(args) == 2 && args[1] == "report" {
			for _, name := range []string{"ORDERS", "PAYMENTS", "BACKUP", "ALL_EVENTS"} {
				if !strings.Contains(out, name) {
					t.Errorf("nats stream report does not show %s:\n%s", name, out)
				}
			}
		}
	}
	for _, args := range readmeNATSCommands(t, "### Consumer pause") {
		run(args)
	}
}
