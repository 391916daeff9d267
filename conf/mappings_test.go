package conf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// wantMappings is what every file in TestMappingsBlock holds.
var wantMappings = &Mappings{Entries: []Mapping{
	{Source: "Orders.*", Destinations: []MapDestination{{Subject: "orders.{{partition(8,1)}}.$1", Weight: 100}}},
	{Source: "canary", Destinations: []MapDestination{
		{Subject: "canary.New", Weight: 10},
		{Subject: "canary.old", Weight: 80},
		{Subject: "canary.eu", Weight: 100, Cluster: "eu"},
	}},
	{Source: "single", Destinations: []MapDestination{{Subject: "one", Weight: 50}}},
}}

// The block keeps its subjects as written, case and dots included, in
// every file format, under either name.
func TestMappingsBlock(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"bus.yaml": `
mappings:
  "Orders.*": "orders.{{partition(8,1)}}.$1"
  canary:
    - {destination: canary.New, weight: 10%}
    - {dest: canary.old, weight: 80}
    - {destination: canary.eu, weight: "100%", cluster: eu}
  single: {destination: one, weight: 50%}
`,
		"bus.json": `{"maps": {
  "Orders.*": "orders.{{partition(8,1)}}.$1",
  "canary": [{"destination": "canary.New", "weight": "10%"}, {"Destination": "canary.old", "weight": 80},
             {"destination": "canary.eu", "weight": 100, "cluster": "eu"}],
  "single": {"destination": "one", "weight": 50}}}`,
		"bus.toml": `
[mappings]
"Orders.*" = "orders.{{partition(8,1)}}.$1"
canary = [{destination = "canary.New", weight = "10%"}, {dest = "canary.old", weight = 80},
          {destination = "canary.eu", weight = 100, cluster = "eu"}]
single = {destination = "one", weight = "50%"}
`,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, name, content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Mappings, wantMappings) {
				t.Fatalf("Mappings = %+v\nwant %+v", cfg.Mappings, wantMappings)
			}
		})
	}
}

func TestMappingsAbsent(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "bus.yaml", "port: 4333\n"), nil)
	if err != nil || cfg.Mappings != nil {
		t.Fatalf("Load = %+v, %v; want no mappings", cfg.Mappings, err)
	}
}

// Each bad block names the key down to the entry, and Load fails.
func TestMappingsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, block, key, reason string
	}{
		{"weight_over_100", `a: [{destination: b, weight: 101%}]`, `mappings."a"[0].weight`, "not a weight"},
		{"weight_negative", `a: [{destination: b, weight: -1}]`, `mappings."a"[0].weight`, "not a weight"},
		{"weight_not_a_number", `a: [{destination: b, weight: lots}]`, `mappings."a"[0].weight`, "not a weight"},
		{"weight_missing", `a: [{destination: b}]`, `mappings."a"[0]`, "needs a weight"},
		{"destination_missing", `a: [{weight: 10}]`, `mappings."a"[0]`, "needs a destination"},
		{"unknown_field", `a: [{destination: b, weight: 10, wieght: 3}]`, `mappings."a"[0].wieght`, `"weight"`},
		{"total_over_100", `a: [{destination: b, weight: 60}, {destination: c, weight: 50}]`, `mappings."a"`, "110%"},
		{"cluster_total_over_100", `a: [{destination: b, weight: 60, cluster: x}, {destination: c, weight: 50, cluster: x}]`, `mappings."a"`, `cluster "x"`},
		{"duplicate_destination", `a: [{destination: b, weight: 10}, {destination: b, weight: 10}]`, `mappings."a"`, "twice"},
		{"number_destination", `a: 7`, `mappings."a"`, "not a destination"},
		{"list_of_strings", `a: [b]`, `mappings."a"[0]`, "not a map"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, "bus.yaml", "mappings:\n  "+tc.block+"\n"), nil)
			errs := keyErrors(t, err)
			if len(errs) == 0 {
				t.Fatal("Load accepted the block")
			}
			for _, e := range errs {
				if e.Key == tc.key && strings.Contains(e.Reason, tc.reason) && strings.Contains(e.Error(), "bus.yaml") {
					return
				}
			}
			t.Fatalf("errors %v; want key %s with %q", err, tc.key, tc.reason)
		})
	}
}

func TestMappingsNotAMap(t *testing.T) {
	t.Parallel()
	_, err := Load(writeConfig(t, "bus.yaml", "mappings: [a, b]\n"), nil)
	if !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), "mappings") {
		t.Fatalf("Load = %v; want a bad value for mappings", err)
	}
}
