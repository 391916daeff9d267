package conf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Operator mode's keys in nats-server's .conf and in YAML: the operator
// as a JWT or a file, resolver MEMORY in any case, and resolver_preload
// keeping its upper-case account keys as written.
func TestOperatorKeys(t *testing.T) {
	t.Parallel()
	const (
		opJWT  = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.op.sig"
		accKey = "ADKQTRF5NOD3NSFJVV7H2U5NQBIM4OOQA4QMGUZ4GQ4ZJR3ND5LIP5WX"
		accJWT = "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.acc.sig"
	)
	dir := t.TempDir()
	opFile := filepath.Join(dir, "op.jwt")
	if err := os.WriteFile(opFile, []byte("-----BEGIN NATS OPERATOR JWT-----\n"+opJWT+"\n------END NATS OPERATOR JWT------\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, content, op string }{
		{"nats.conf", "operator: " + opJWT + "\nsystem_account: " + accKey + "\nresolver: MEMORY\nresolver_preload: {\n  " + accKey + ": " + accJWT + "\n}\n", opJWT},
		{"bus.yaml", "operator: [" + opFile + "]\nsystem_account: " + accKey + "\nresolver: memory\nresolver_preload:\n  " + accKey + ": " + accJWT + "\n", "BEGIN NATS OPERATOR JWT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(writeConfig(t, tc.name, tc.content), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.OperatorMode() || len(cfg.Operator.JWTs) != 1 || !strings.Contains(cfg.Operator.JWTs[0], tc.op) {
				t.Fatalf("operator %+v", cfg.Operator)
			}
			if cfg.Resolver == nil || cfg.Resolver.Type != ResolverMemory || cfg.SystemAccount != accKey {
				t.Fatalf("resolver %+v system_account %q", cfg.Resolver, cfg.SystemAccount)
			}
			if want := map[string]string{accKey: accJWT}; cfg.ResolverPreload == nil || !reflect.DeepEqual(cfg.ResolverPreload.Accounts, want) {
				t.Fatalf("resolver_preload %+v, want %v", cfg.ResolverPreload, want)
			}
		})
	}
}

// Operator mode configured by halves, or with what it replaces, or with
// a resolver bus lacks, is refused naming the key.
func TestOperatorKeysErrors(t *testing.T) {
	t.Parallel()
	const op = "operator: eyJ0eXAiOiJKV1QifQ.a.b\n"
	for _, tc := range []struct{ name, content, key, reason string }{
		{"no resolver", op, "operator", "needs a resolver"},
		{"resolver alone", "resolver: MEMORY\n", "resolver", "needs operator"},
		{"preload alone", "resolver_preload: {A: eyJ}\n", "resolver_preload", "needs operator"},
		{"url resolver", op + "resolver: URL(http://localhost:9090/jwt/v1/accounts/)\n", "resolver", "no URL resolver"},
		{"unknown resolver", op + "resolver: LDAP\n", "resolver", "MEMORY or a block"},
		{"resolver without dir", op + "resolver: {type: full}\n", "resolver.dir", "needs to point to a directory"},
		{"resolver of no type", op + "resolver: {type: fancy, dir: /tmp/jwt}\n", "resolver.type", "full or cache"},
		{"cache with allow_delete", op + "resolver: {type: cache, dir: /tmp/jwt, allow_delete: true}\n", "resolver.allow_delete", "CACHE does not accept allow_delete"},
		{"cache with interval", op + "resolver: {type: cache, dir: /tmp/jwt, interval: 2m}\n", "resolver.interval", "CACHE does not accept sync"},
		{"full with ttl", op + "resolver: {type: full, dir: /tmp/jwt, ttl: 2m}\n", "resolver.ttl", "FULL does not accept ttl"},
		{"hard_delete alone", op + "resolver: {type: full, dir: /tmp/jwt, hard_delete: true}\n", "resolver.hard_delete", "no effect without delete"},
		{"negative limit", op + "resolver: {type: full, dir: /tmp/jwt, limit: -1}\n", "resolver.limit", "not a whole number"},
		{"unknown resolver key", op + "resolver: {type: full, dir: /tmp/jwt, colour: red}\n", "resolver.colour", ""},
		{"operator a device", "operator: /dev/zero\nresolver: MEMORY\n", "operator", "not a JWT file"},
		{"operator file missing", "operator: /nonexistent/op.jwt\nresolver: MEMORY\n", "operator", "not a file that can be read"},
		{"preload not a JWT", op + "resolver: MEMORY\nresolver_preload: {A: 1}\n", "resolver_preload.A", "not an account JWT"},
		{"accounts block", op + "resolver: MEMORY\naccounts: {APP: {users: [{user: a, password: b}]}}\n", "accounts", "operator mode"},
		{"authorization users", op + "resolver: MEMORY\nauthorization: {users: [{user: a, password: b}]}\n", "authorization", "operator mode"},
		{"resolver_tls", op + "resolver: MEMORY\nresolver_tls: {cert_file: x}\n", "resolver_tls", "operator mode takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, "bus.yaml", tc.content), nil)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, ke := range keyErrors(t, err) {
				if ke.Key == tc.key && strings.Contains(ke.Reason, tc.reason) {
					return
				}
			}
			t.Fatalf("error %v does not name %s (%q)", err, tc.key, tc.reason)
		})
	}
}
