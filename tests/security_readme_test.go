package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's "Securing bus", walked as a reader would: each YAML block
// is the config of a real bus binary, and each `$ …` line of the
// transcripts runs (the nats CLI, bus passwd) and prints what the README
// shows. What the test changes in the README's text, and why: the
// `$2a$11$...` placeholders become `bus passwd` hashes of the passwords
// the transcripts use; the worker's public key becomes that of the nkey
// `nats auth nkey gen` made; the fixed ports are free ones (flags win
// over the file, so BUS_* variables override them).
func TestReadmeSecuringBusWalks(t *testing.T) {
	t.Parallel()
	nats := natsCLI(t)
	bus, err := busBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	section := readmeSection(t, "## Securing bus")
	blocks := readmeBlocks(t, "## Securing bus")
	block := func(lang, holds string) string {
		t.Helper()
		for _, b := range blocks {
			if b.lang == lang && strings.Contains(b.text, holds) {
				return b.text
			}
		}
		t.Fatalf("Securing bus has no %q block with %q", lang, holds)
		return ""
	}

	// Hash secrets: `echo -n 'secret' | bus passwd` prints a bcrypt hash.
	passwd := transcript(block("", "bus passwd"))
	echo := regexp.MustCompile(`^echo -n '([^']*)' \| bus passwd$`).FindStringSubmatch(passwd[0].command)
	if echo == nil || len(passwd[0].output) != 1 || !strings.HasPrefix(passwd[0].output[0], "$2a$11$") {
		t.Fatalf("the passwd transcript is not `echo -n '…' | bus passwd` and a $2a$11$ hash: %+v", passwd)
	}
	hash := func(secret string) string {
		h := strings.TrimSpace(runShell(t, ctx, secret, bus, "passwd"))
		if !regexp.MustCompile(`^\$2a\$11\$[./A-Za-z0-9]{53}$`).MatchString(h) {
			t.Fatalf("bus passwd printed %q, not a $2a$11$ hash", h)
		}
		return h
	}
	const placeholder = `"$2a$11$..."`

	t.Run("token", func(t *testing.T) {
		use := regexp.MustCompile("`nats (--token (\\S+) [^`]*)`").FindStringSubmatch(section)
		if use == nil {
			t.Fatal("Securing bus does not say how the nats CLI sends a token")
		}
		cfg := strings.Replace(block("yaml", "token:"), placeholder, `"`+hash(use[2])+`"`, 1)
		url, _ := startBusYAML(t, bus, cfg)
		runNATSStep(t, ctx, nats, url, transcriptStep{command: "nats " + use[1], output: []string{`Published 2 bytes to "x"`}}, strings.NewReplacer())
		runNATSStep(t, ctx, nats, url, transcriptStep{command: "nats pub x hi", output: []string{"nats: error: nats: Authorization Violation"}}, strings.NewReplacer())
	})

	t.Run("users", func(t *testing.T) {
		dir := t.TempDir()
		gen := regexp.MustCompile("`nats (auth nkey gen [^`]*)`").FindStringSubmatch(section)
		show := regexp.MustCompile("`nats (auth nkey show [^`]*)`").FindStringSubmatch(section)
		if gen == nil || show == nil {
			t.Fatal("Securing bus does not say how to make the worker's nkey")
		}
		runIn(t, ctx, dir, nats, shellWords(t, gen[1])...)
		pub := strings.TrimSpace(runIn(t, ctx, dir, nats, shellWords(t, show[1])...))
		if !regexp.MustCompile(`^U[A-Z2-7]{55}$`).MatchString(pub) {
			t.Fatalf("nats %s printed %q, not a user public key", show[1], pub)
		}
		steps := transcript(block("", "--nkey"))
		passwords := map[string]string{}
		for _, s := range steps {
			if m := regexp.MustCompile(`--user (\S+) --password (\S+)`).FindStringSubmatch(s.command); m != nil {
				passwords[m[1]] = m[2]
			}
		}
		cfg := regexp.MustCompile(`\bU[A-Z2-7]{55}\b`).ReplaceAllString(block("yaml", "users:"), pub)
		cfg = hashUserPasswords(t, cfg, placeholder, passwords, hash)
		url, _ := startBusYAML(t, bus, cfg)
		nk := filepath.Join(dir, "worker.nk")
		for _, s := range steps {
			runNATSStep(t, ctx, nats, url, s, strings.NewReplacer("worker.nk", nk))
		}
	})

	t.Run("tls", func(t *testing.T) {
		walkReadmeTLS(t, ctx, nats, bus, section, block("yaml", "tls:"), transcript(block("", "tls://")))
	})
}

// hashUserPasswords replaces each user's password placeholder in cfg
// with the hash of the password the transcripts log in with.
func hashUserPasswords(t *testing.T, cfg, placeholder string, passwords map[string]string, hash func(string) string) string {
	t.Helper()
	userKey := regexp.MustCompile(`user: (\w+)`)
	lines := strings.Split(cfg, "\n")
	user := ""
	for i, l := range lines {
		if m := userKey.FindStringSubmatch(l); m != nil {
			user = m[1]
		}
		if strings.Contains(l, placeholder) {
			pw, ok := passwords[user]
			if !ok {
				t.Fatalf("no transcript line logs in as %q, whose password the README hides", user)
			}
			lines[i] = strings.Replace(l, placeholder, `"`+hash(pw)+`"`, 1)
		}
	}
	return strings.Join(lines, "\n")
}

// startBusYAML runs `bus serve -c bus.yaml` on text, on free ports and a
// fresh store, and returns its client URL and the process.
func startBusYAML(t *testing.T, bin, text string, env ...string) (string, *deployProc) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startDeployProc(t, []string{bin, "serve", "-c", cfg, "--store-dir", t.TempDir()}, append([]string{"BUS_HOST=127.0.0.1"}, env...)...)
	client, _ := p.serving(t)
	return "nats://" + client, p
}

// runIn runs a command in dir and returns its standard output.
func runIn(t *testing.T, ctx context.Context, dir, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v", bin, args, err)
	}
	return string(out)
}
