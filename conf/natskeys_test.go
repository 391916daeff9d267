package conf

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// docs/config.md lists every nats-server key that bus maps, refuses or
// ignores, so that the table an operator reads is the code's.
func TestConfigDocListsEveryNATSKey(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var all []string
	all = append(all, slices.Collect(maps.Keys(unsupportedKeys))...)
	all = append(all, slices.Collect(maps.Keys(offOnlyKeys))...)
	all = append(all, tuningKeys...)
	for _, k := range jetstreamTuningKeys {
		all = append(all, "jetstream."+k)
	}
	for k := range jetstreamUnsupported {
		all = append(all, "jetstream."+k)
	}
	all = append(all, "listen", "http", "https", "debug", "logtime")
	for _, k := range all {
		if !strings.Contains(doc, "`"+k+"`") && !strings.Contains(doc, "`"+k+":") {
			t.Errorf("docs/config.md does not list `%s`", k)
		}
	}
}
