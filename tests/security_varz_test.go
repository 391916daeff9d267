package tests

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bus-dev/bus/server"
)

// /varz reports the security settings with the reference's names and
// values.
func TestSecurityVarzMatchesReference(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "varz")
	cert, key := ca.serverCert(t)
	for _, tc := range []struct {
		name string
		tls  server.TLSOptions
		auth server.Authorization
	}{
		{"plain", server.TLSOptions{}, server.Authorization{}},
		{"auth and tls", server.TLSOptions{CertFile: cert, KeyFile: key, CAFile: ca.file, Verify: true}, server.Authorization{Token: "t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var busVarz, refVarz any
			if tc.tls.CertFile != "" {
				p := startTLSPair(t, tc.tls, tc.auth)
				busVarz = p.bus.Varz()
				refVarz, _ = p.ref.Varz(nil)
			} else {
				busVarz = startBus(t, server.Options{}).Varz()
				refVarz, _ = startReference(t, false).Varz(nil)
			}
			pick := func(v any) string {
				b, _ := json.Marshal(v)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				return fmt.Sprint(m["auth_required"], m["tls_required"], m["tls_verify"], m["auth_timeout"], m["tls_timeout"])
			}
			if got, want := pick(busVarz), pick(refVarz); got != want {
				t.Errorf("varz auth_required tls_required tls_verify auth_timeout tls_timeout: bus %s, reference %s", got, want)
			}
		})
	}
}
