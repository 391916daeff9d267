package conf

import (
	"reflect"
	"strings"
	"testing"
)

// sample returns a raw setting for k that differs from its default.
func sample(t *testing.T, k key) any {
	t.Helper()
	switch v := k.value.(type) {
	case stringValue:
		return "sample"
	case intValue:
		return 7
	case sizeValue:
		return "3KB"
	case durationValue:
		return "3s"
	case levelValue:
		return "debug"
	case choiceValue:
		return v.choices[len(v.choices)-1]
	case boolValue:
		return !*v.p
	case jetstreamValue:
		return !v.p.Enabled
	case authValue:
		return map[string]any{"token": "sample"}
	case tlsValue:
		return map[string]any{"cert_file": "sample"}
	case mappingsValue:
		return map[string]any{"sample": "elsewhere"}
	case leafNodesValue:
		return map[string]any{"remotes": []any{map[string]any{"url": "nats://sample"}}}
	case webSocketValue:
		return map[string]any{"no_tls": true}
	case mqttValue:
		return map[string]any{"port": 1883}
	case featureFlagsValue:
		return map[string]any{"js_ack_fc_v2": true}
	case operatorValue:
		return "eyJ0eXAiOiJKV1QifQ.sample"
	case trustedKeysValue:
		return "OD2W2I4MVRA5TGZLZ2AG6ZHGVL3OTKFWQJFIX4TNBER23E6P46S345YY"
	case resolverValue:
		return "memory"
	case preloadValue:
		return map[string]any{"ASAMPLE": "eyJ0eXAiOiJKV1QifQ.sample"}
	case accountsValue:
		return map[string]any{"SYS": map[string]any{"users": []any{map[string]any{"user": "admin", "password": "x"}}}}
	}
	t.Fatalf("key %s: no sample for %T", k.name, k.value)
	return nil
}

// Every Config field must be set by exactly one key, so no field can be
// added without a key (and, through TestExampleFileDocumentsEveryKey, a
// paragraph in bus.example.yaml).
func TestKeysCoverConfig(t *testing.T) {
	t.Parallel()
	def := Default()
	typ := reflect.TypeFor[Config]()
	setBy := map[string]string{} // field → key
	for _, k := range keys(new(Config)) {
		c := Default()
		ck := keys(&c)
		var bound key
		for _, kk := range ck {
			if kk.name == k.name {
				bound = kk
			}
		}
		if err := bound.value.set(sample(t, bound)); err != nil {
			t.Fatalf("key %s: set sample: %v", k.name, err)
		}
		var changed []string
		for i := range typ.NumField() {
			if !reflect.ValueOf(c).Field(i).Equal(reflect.ValueOf(def).Field(i)) {
				changed = append(changed, typ.Field(i).Name)
			}
		}
		if len(changed) != 1 {
			t.Errorf("key %s sets fields %v, want exactly one", k.name, changed)
			continue
		}
		if other, dup := setBy[changed[0]]; dup {
			t.Errorf("field %s is set by keys %s and %s", changed[0], other, k.name)
		}
		setBy[changed[0]] = k.name
	}
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; setBy[name] == "" {
			t.Errorf("Config.%s is set by no key; add it to keys()", name)
		}
	}
}

func TestKeyNamesAreUniqueAndWellFormed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, k := range keys(new(Config)) {
		for _, name := range append([]string{k.name}, k.aliases...) {
			if seen[name] {
				t.Errorf("name %q used twice", name)
			}
			seen[name] = true
			if name != strings.ToLower(name) || strings.ContainsAny(name, "- ") {
				t.Errorf("name %q: want lowercase words joined by _", name)
			}
		}
		if k.usage == "" {
			t.Errorf("key %s has no usage", k.name)
		}
	}
}

func TestAddFlagsShowsDefaults(t *testing.T) {
	t.Parallel()
	fs := parseFlags(t)
	tests := []struct{ flag, typ, def string }{
		{"host", "string", "0.0.0.0"},
		{"port", "int", "4222"},
		{"http-port", "int", "8222"},
		{"server-name", "string", ""},
		{"store-dir", "string", "./data"},
		{"jetstream", "bool", "true"},
		{"max-payload", "size", "1MB"},
		{"max-control-line", "size", "4KB"},
		{"max-connections", "int", "65536"},
		{"max-subscriptions", "int", "0"},
		{"max-pending", "size", "64MB"},
		{"max-pending-total", "size", "0"},
		{"ping-interval", "duration", "2m"},
		{"max-pings-out", "int", "2"},
		{"write-deadline", "duration", "10s"},
		{"https-port", "int", "0"},
		{"http-auth", "bool", "false"},
		{"max-unauthenticated", "int", "8192"},
		{"no-auth-user", "string", ""},
		{"system-account", "string", ""},
		{"client-advertise", "string", ""},
		{"no-header-support", "bool", "false"},
		{"no-advertise", "bool", "false"},
		{"connect-error-reports", "int", "3600"},
		{"reconnect-error-reports", "int", "1"},
		{"lame-duck-duration", "duration", "2m"},
		{"lame-duck-grace-period", "duration", "10s"},
		{"pid-file", "string", ""},
		{"log-level", "level", "info"},
		{"log-format", "string", "text"},
		{"logtime", "bool", "true"},
		{"logtime-utc", "bool", "false"},
		{"log-file", "string", ""},
		{"logfile-size-limit", "size", "0"},
		{"logfile-max-num", "int", "0"},
		{"syslog", "bool", "false"},
		{"remote-syslog", "string", ""},
		{"trace", "bool", "false"},
		{"trace-verbose", "bool", "false"},
		{"trace-headers", "bool", "false"},
		{"max-traced-msg-len", "int", "0"},
	}
	n := 0
	for _, k := range keys(new(Config)) {
		if !k.fileOnly {
			n++
		} else if fs.Lookup(k.flag()) != nil {
			t.Errorf("file-only key %s has a flag", k.name)
		}
	}
	if n != len(tests) {
		t.Errorf("%d keys, but the test checks %d flags", n, len(tests))
	}
	for _, tt := range tests {
		f := fs.Lookup(tt.flag)
		if f == nil {
			t.Errorf("no flag --%s", tt.flag)
			continue
		}
		if f.Value.Type() != tt.typ || f.DefValue != tt.def {
			t.Errorf("--%s: type %s, default %q; want %s, %q", tt.flag, f.Value.Type(), f.DefValue, tt.typ, tt.def)
		}
	}
}
