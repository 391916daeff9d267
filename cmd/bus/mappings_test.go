package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

func TestOptionsMapsMappings(t *testing.T) {
	t.Parallel()
	cfg := conf.Default()
	cfg.Mappings = &conf.Mappings{Entries: []conf.Mapping{
		{Source: "a.*", Destinations: []conf.MapDestination{{Subject: "b.$1", Weight: 100}}},
		{Source: "c", Destinations: []conf.MapDestination{{Subject: "d", Weight: 40}, {Subject: "e", Weight: 60, Cluster: "x"}}},
	}}
	want := []server.Mapping{
		{Source: "a.*", Destinations: []server.MapDestination{{Subject: "b.$1", Weight: 100}}},
		{Source: "c", Destinations: []server.MapDestination{{Subject: "d", Weight: 40}, {Subject: "e", Weight: 60, Cluster: "x"}}},
	}
	if got := options(cfg, nil).Mappings; !reflect.DeepEqual(got, want) {
		t.Fatalf("Mappings = %+v, want %+v", got, want)
	}
	if got := options(conf.Default(), nil).Mappings; got != nil {
		t.Fatalf("no block gave %+v", got)
	}
}

// A mapping the server refuses (here an unknown function, which only the
// transform engine knows) stops bus before it listens, exit 2, naming the
// mapping; so does one conf refuses.
func TestBadMappingExitsTwo(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ file, want string }{
		"transform": {"mappings:\n  \"orders.*\": \"x.{{upper(1)}}\"\n", `mappings "orders.*"`},
		"weights":   {"mappings:\n  a: [{destination: b, weight: 70%}, {destination: c, weight: 40%}]\n", `mappings."a"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := runBus(t, nil, "serve", "--port", "-1", "--http-port", "0", "--store-dir", t.TempDir(), "--config", writeFile(t, "bus.yaml", tc.file))
			stderr := p.stderr.String()
			if p.code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit %d naming %s", p.code, stderr, exitUsage, tc.want)
			}
		})
	}
}
