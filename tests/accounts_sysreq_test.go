package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// startAccountsSysPair runs bus and the reference with the JetStream
// accounts scenario and a system account SYS (user admin).
func startAccountsSysPair(t *testing.T) (*server.Server, *natsserver.Server) {
	t.Helper()
	refConfig := strings.Replace(accountsJSReferenceConfig, "  N { users: [ {user: n1, password: pw} ] }",
		"  N { users: [ {user: n1, password: pw} ] }\n  SYS { users: [ {user: admin, password: pw} ] }", 1) + "system_account: SYS\n"
	opts := accountsJSBusOptions(t.TempDir())
	opts.SystemAccount = server.SystemAccount{Name: "SYS", Users: []server.User{{Name: "admin", Password: accountsPass}}}
	return startBus(t, opts), startReferenceConfig(t, refConfig)
}

// TestAccountsSysRequestsMatchReference asks the system account's
// $SYS.REQ.ACCOUNT.<account>.JSZ, .STATZ and .LEAFZ about each account
// of the JetStream scenario, on bus and the reference: the same
// answers, the same errors, and the same silence for an idle account's
// STATZ. (num_subscriptions is left out: the reference counts the
// service imports it subscribes in every account, bus its clients'.)
func TestAccountsSysRequestsMatchReference(t *testing.T) {
	t.Parallel()
	bus, ref := startAccountsSysPair(t)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		accountsMonitorScenario(t, url)
		admin := connectAs(t, url, "admin")
		var steps []string
		ask := func(subject, body string) {
			doc, err := sysRequest(admin, subject, []byte(body), 2*time.Second)
			if err != nil {
				if err == nats.ErrTimeout {
					steps = append(steps, subject+": no answer")
					return
				}
				t.Fatalf("%s: %v", subject, err)
			}
			if e := field(doc, "error"); e != nil {
				steps = append(steps, fmt.Sprintf("%s: error %v %v", subject, field(e, "code"), field(e, "description")))
				return
			}
			data := field(doc, "data")
			var parts []string
			for _, k := range []string{"name", "id", "memory", "reserved_memory", "reserved_storage", "api.total",
				"stream_detail.0.name", "stream_detail.0.state.messages", "stream_detail.0.consumer_detail.0.name",
				"account_statz.0.acc", "account_statz.0.conns", "num_leafs"} {
				if v := field(data, k); v != nil {
					parts = append(parts, fmt.Sprintf("%s=%v", k, v))
				}
			}
			steps = append(steps, subject+": "+strings.Join(parts, " "))
		}
		ask("$SYS.REQ.ACCOUNT.A.JSZ", `{"streams":true,"consumer":true}`)
		ask("$SYS.REQ.ACCOUNT.B.JSZ", "")
		ask("$SYS.REQ.ACCOUNT.N.JSZ", "")
		ask("$SYS.REQ.ACCOUNT.nobody.JSZ", "")
		ask("$SYS.REQ.ACCOUNT.A.STATZ", "")
		ask("$SYS.REQ.ACCOUNT.N.STATZ", "")
		ask("$SYS.REQ.ACCOUNT.N.STATZ", `{"include_unused":true}`)
		ask("$SYS.REQ.ACCOUNT.A.LEAFZ", "")
		return steps
	})
}
