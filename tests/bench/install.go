package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The reference server and the client tool, pinned so that runs on
// different days compare the same things.
const (
	natsServerPkg     = "github.com/nats-io/nats-server/v2"
	natsServerVersion = "v2.15.2"
	natsCLIPkg        = "github.com/nats-io/natscli/nats"
	natsCLIVersion    = "v0.5.0"
)

// installTimeout bounds each go install or go build; a cold module cache
// downloads and compiles nats-server and natscli.
const installTimeout = 10 * time.Minute

// tools are the absolute paths of the binaries a run needs.
type tools struct {
	natsServer string
	nats       string
	bus        string
	busRev     string // git revision bus was built from, "+dirty" when modified
}

// defaultCache is $XDG_CACHE_HOME/bus-bench, or ~/.cache/bus-bench.
func defaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "bus-bench")
	}
	return filepath.Join(dir, "bus-bench")
}

// install makes sure the pinned nats-server and nats CLI are in cache/bin
// (go install, skipped when the right version is there already) and builds
// bus into the file busBin: from the working tree of the module at root,
// or, when rev is not empty, from that git revision exported to a scratch
// directory (so a half-edited tree does not get in the way).
func install(ctx context.Context, cache, busBin, root, rev string, log io.Writer) (tools, error) {
	bin := filepath.Join(cache, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return tools{}, fmt.Errorf("install: %w", err)
	}
	t := tools{
		natsServer: filepath.Join(bin, "nats-server"),
		nats:       filepath.Join(bin, "nats"),
		bus:        busBin,
	}
	goEnv := append(os.Environ(), "GOBIN="+bin, "GOFLAGS=", "GOWORK=off")
	pinned := []struct{ path, pkg, version string }{
		{t.natsServer, natsServerPkg, natsServerVersion},
		{t.nats, natsCLIPkg, natsCLIVersion},
	}
	for _, p := range pinned {
		if hasVersion(ctx, p.path, p.version) {
			continue
		}
		fmt.Fprintf(log, "installing %s@%s into %s\n", p.pkg, p.version, bin)
		if err := goCmd(ctx, cache, goEnv, "install", p.pkg+"@"+p.version); err != nil {
			return tools{}, err
		}
		if !hasVersion(ctx, p.path, p.version) {
			return tools{}, fmt.Errorf("install: %s does not report %s after go install", p.path, p.version)
		}
	}
	src := root
	if rev != "" {
		dir, err := exportRevision(ctx, root, rev, cache)
		if err != nil {
			return tools{}, err
		}
		defer os.RemoveAll(dir)
		src = dir
	}
	fmt.Fprintf(log, "building bus into %s\n", t.bus)
	if err := goCmd(ctx, src, os.Environ(), "build", "-o", t.bus, "./cmd/bus"); err != nil {
		return tools{}, err
	}
	t.busRev = gitRevision(ctx, root, rev)
	return t, nil
}

// exportRevision writes the tree of rev into a new directory under cache
// with git archive, which reads the repository without touching its index.
func exportRevision(ctx context.Context, root, rev, cache string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp(cache, "src-")
	if err != nil {
		return "", fmt.Errorf("install: %w", err)
	}
	tarball := filepath.Join(dir, "src.tar")
	if _, err := runTool(ctx, root, nil, "git", "archive", "--format=tar", "-o", tarball, rev); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("install: export %s: %w", rev, err)
	}
	if _, err := runTool(ctx, dir, nil, "tar", "-xf", tarball); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("install: export %s: %w", rev, err)
	}
	return dir, nil
}

func goCmd(ctx context.Context, dir string, env []string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	if _, err := runTool(ctx, dir, env, append([]string{"go"}, args...)...); err != nil {
		return fmt.Errorf("install: go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// hasVersion reports whether the binary at path runs and prints version
// in its --version output ("nats-server: v2.15.2", "v0.5.0").
func hasVersion(ctx context.Context, path, version string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := runTool(ctx, "", nil, path, "--version")
	return err == nil && strings.Contains(out, version)
}

// moduleRoot is the directory of the go.mod that `go run ./tests/bench`
// was started in.
func moduleRoot(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := runTool(ctx, "", nil, "go", "env", "GOMOD")
	if err != nil {
		return "", fmt.Errorf("find module root: %w", err)
	}
	gomod := strings.TrimSpace(out)
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("find module root: not inside a Go module; run from the bus repository")
	}
	return filepath.Dir(gomod), nil
}

// gitRevision names what bus was built from: the short commit of rev, or
// of HEAD plus "+dirty" when the working tree has changes to bus's code.
func gitRevision(ctx context.Context, root, rev string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	commit := rev
	if commit == "" {
		commit = "HEAD"
	}
	out, err := runTool(ctx, root, nil, "git", "rev-parse", "--short", commit)
	if err != nil {
		return "unknown"
	}
	short := strings.TrimSpace(out)
	if rev != "" {
		return short
	}
	if st, err := runTool(ctx, root, nil, "git", "status", "--porcelain", "--", "cmd", "server", "subjects", "jetlog", "conf"); err == nil && strings.TrimSpace(st) != "" {
		short += "+dirty"
	}
	return short
}
