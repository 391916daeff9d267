package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/README.md is the map of docs/: every page is on it, every link on
// it leads somewhere, and the README links to it.
func TestCLIDocsIndexMapsEveryPage(t *testing.T) {
	t.Parallel()
	index, err := os.ReadFile("../docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\(([^)#]+)`).FindAllStringSubmatch(string(index), -1) {
		links[filepath.Clean(m[1])] = true
		if _, err := os.Stat(filepath.Join("../docs", m[1])); err != nil {
			t.Errorf("docs/README.md links to %s: %v", m[1], err)
		}
	}
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if name := filepath.Base(p); name != "README.md" && !links[name] {
			t.Errorf("docs/%s is not on docs/README.md's map", name)
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "](docs/README.md)") {
		t.Error("the README does not link to docs/README.md")
	}
}
