package conf

import (
	"os"
	"strings"
	"testing"
)

const exampleFile = "bus.example.yaml"

// bus.example.yaml must parse, hold every key at its default, and explain
// each key in a comment just above it, so the documentation cannot drift
// from the code.
func TestExampleFileDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	got, err := Load(exampleFile, nil)
	if err != nil {
		t.Fatalf("Load(%s): %v", exampleFile, err)
	}
	if got != Default() {
		t.Errorf("%s does not hold the defaults:\n got %+v\nwant %+v", exampleFile, got, Default())
	}

	settings, err := readFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for _, k := range keys(new(Config)) {
		if k.fileOnly {
			// A block has no default to show: the file documents it with
			// a commented-out example.
			if !strings.Contains(string(data), "\n# "+k.name+":\n") {
				t.Errorf("%s has no commented example of block %s", exampleFile, k.name)
			}
			continue
		}
		if _, ok := settings[k.name]; !ok {
			t.Errorf("%s does not set key %s", exampleFile, k.name)
			continue
		}
		for i, line := range lines {
			if strings.HasPrefix(line, k.name+":") && (i == 0 || !strings.HasPrefix(lines[i-1], "#")) {
				t.Errorf("%s:%d: key %s has no comment above it", exampleFile, i+1, k.name)
			}
		}
	}
}
