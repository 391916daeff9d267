package conf

import (
	"reflect"
	"testing"
	"time"
)

// The resolver block of nats-server's NATS resolvers, in .conf and YAML,
// with each key read as nats-server reads it.
func TestNATSResolverBlock(t *testing.T) {
	t.Parallel()
	const op = "operator: eyJ0eXAiOiJKV1QifQ.a.b\n"
	for _, tc := range []struct {
		name, file, content string
		want                Resolver
	}{
		{"full", "nats.conf", op + "resolver {\n  type: full\n  dir: './jwt'\n  allow_delete: true\n  hard_delete: true\n  interval: \"2m\"\n  limit: 1000\n  timeout: \"1.9s\"\n}\n",
			Resolver{Type: ResolverFull, Dir: "./jwt", AllowDelete: true, HardDelete: true, Interval: 2 * time.Minute, Limit: 1000, Timeout: 1900 * time.Millisecond}},
		{"cache", "bus.yaml", op + "resolver:\n  type: CACHE\n  dir: /var/jwt\n  limit: 10\n  ttl: 1h\n",
			Resolver{Type: ResolverCache, Dir: "/var/jwt", Limit: 10, TTL: time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, tc.file, tc.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Resolver == nil || !reflect.DeepEqual(*cfg.Resolver, tc.want) {
				t.Fatalf("resolver %+v, want %+v", cfg.Resolver, tc.want)
			}
		})
	}
}
