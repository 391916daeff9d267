package tests

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestSysRequestsAnsweredAsReference sends every $SYS request as the
// system account's admin and as two global users, to bus and to the
// reference configured alike: the same requests are answered (or get no
// responders) for the same users, with the same envelope and data keys.
func TestSysRequestsAnsweredAsReference(t *testing.T) {
	t.Parallel()
	p := startSysPair(t)
	subjects := []string{
		"$SYS.REQ.SERVER.PING", "$SYS.REQ.SERVER.PING.STATSZ", "$SYS.REQ.SERVER.PING.IDZ",
		"$SYS.REQ.SERVER.PING.VARZ", "$SYS.REQ.SERVER.PING.CONNZ", "$SYS.REQ.SERVER.PING.SUBSZ",
		"$SYS.REQ.SERVER.PING.JSZ", "$SYS.REQ.SERVER.PING.HEALTHZ", "$SYS.REQ.SERVER.PING.ACCOUNTZ",
		"$SYS.REQ.SERVER.PING.ROUTEZ", "$SYS.REQ.SERVER.PING.GATEWAYZ", "$SYS.REQ.SERVER.PING.LEAFZ",
		"$SYS.REQ.SERVER.<id>.VARZ", "$SYS.REQ.SERVER.<id>.JSZ", "$SYS.REQ.SERVER.<id>.HEALTHZ",
		"$SYS.REQ.SERVER.PING.BOGUS", "$SYS.REQ.USER.INFO",
		"$SYS.REQ.ACCOUNT.PING.STATZ", "$SYS.REQ.ACCOUNT.PING.CONNZ",
	}
	users := [][2]string{{sysAdmin, sysAdminPass}, {sysApp, sysAppPass}, {sysAll, sysAllPass}}
	// outcome: "none" (no responders) or the sorted top-level keys.
	type outcome struct{ keys, server, data string }
	results := map[string]map[string]outcome{}
	docs := map[string]map[string]map[string]any{}
	for _, side := range []struct{ name, url, id string }{{"bus", p.busURL, p.bus.ID()}, {"reference", p.refURL, p.ref.ID()}} {
		results[side.name], docs[side.name] = map[string]outcome{}, map[string]map[string]any{}
		for _, u := range users {
			nc := connect(t, side.url, nats.UserInfo(u[0], u[1]))
			for _, subj := range subjects {
				subject := replaceID(subj, side.id)
				key := u[0] + " " + subj
				doc, err := sysRequest(nc, subject, nil, 2*time.Second)
				switch {
				case errors.Is(err, nats.ErrNoResponders):
					results[side.name][key] = outcome{keys: "no responders"}
				case err != nil:
					t.Fatalf("%s %s: %v", side.name, key, err)
				default:
					results[side.name][key] = outcome{keys: keys(doc), server: keys(doc["server"]), data: keys(doc["data"])}
					docs[side.name][key] = doc
				}
			}
		}
	}
	for key, ref := range results["reference"] {
		bus := results["bus"][key]
		if bus.keys != ref.keys {
			t.Errorf("%s: bus answers %q, the reference %q", key, bus.keys, ref.keys)
			continue
		}
		// bus claims no feature flags.
		if want := removeWord(ref.server, "feature_flags"); bus.server != want {
			t.Errorf("%s: envelope server keys %q on bus, %q on the reference", key, bus.server, want)
		}
	}
	// The data of each answer, field by field where the tools read it.
	differs := map[string]string{
		"admin $SYS.REQ.ACCOUNT.PING.CONNZ": "the reference reads PING as an account name and lists nobody; bus lists the system account's connections",
	}
	for key, ref := range docs["reference"] {
		if _, ok := differs[key]; ok {
			continue
		}
		if bus := docs["bus"][key]; bus != nil {
			sameShape(t, key, bus, ref, sysNotServed)
		}
	}
	for _, key := range []string{"admin $SYS.REQ.USER.INFO", "app $SYS.REQ.USER.INFO", "all $SYS.REQ.USER.INFO"} {
		b, r := docs["bus"][key], docs["reference"][key]
		sameValues(t, key, b, r, "data.user", "data.account", "data.account_name")
		if fmt.Sprint(sortedAny(field(b, "data.permissions.publish.allow"))) != fmt.Sprint(sortedAny(field(r, "data.permissions.publish.allow"))) {
			t.Errorf("%s: publish allow %v on bus, %v on the reference", key, field(b, "data.permissions.publish.allow"), field(r, "data.permissions.publish.allow"))
		}
		if fmt.Sprint(sortedAny(field(b, "data.permissions.subscribe.allow"))) != fmt.Sprint(sortedAny(field(r, "data.permissions.subscribe.allow"))) {
			t.Errorf("%s: subscribe allow %v on bus, %v on the reference", key, field(b, "data.permissions.subscribe.allow"), field(r, "data.permissions.subscribe.allow"))
		}
	}
	for _, key := range []string{"admin $SYS.REQ.SERVER.PING.CONNZ", "app $SYS.REQ.SERVER.PING.CONNZ", "app $SYS.REQ.ACCOUNT.PING.CONNZ"} {
		// The admin sees every connection; a global user its account's.
		sameValues(t, key, docs["bus"][key], docs["reference"][key], "data.num_connections", "data.total")
	}
	for _, key := range []string{"admin $SYS.REQ.SERVER.PING", "admin $SYS.REQ.SERVER.PING.VARZ"} {
		sameValues(t, key, docs["bus"][key], docs["reference"][key], "server.jetstream", "server.host")
	}
	busAcc, refAcc := docs["bus"]["admin $SYS.REQ.SERVER.PING.ACCOUNTZ"], docs["reference"]["admin $SYS.REQ.SERVER.PING.ACCOUNTZ"]
	sameValues(t, "accountz", busAcc, refAcc, "data.system_account")
	if b, r := fmt.Sprint(sortedAny(field(busAcc, "data.accounts"))), fmt.Sprint(sortedAny(field(refAcc, "data.accounts"))); b != r {
		t.Errorf("accountz accounts %s on bus, %s on the reference", b, r) // the reference's order is a map's
	}
	sameValues(t, "varz", docs["bus"]["admin $SYS.REQ.SERVER.PING.VARZ"], docs["reference"]["admin $SYS.REQ.SERVER.PING.VARZ"],
		"data.system_account", "data.connections", "data.auth_required")
	sameValues(t, "statsz", docs["bus"]["admin $SYS.REQ.SERVER.PING"], docs["reference"]["admin $SYS.REQ.SERVER.PING"],
		"statsz.connections", "statsz.active_accounts", "statsz.active_servers")
}
