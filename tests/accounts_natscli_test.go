package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNatsCLIAccountInfo runs `nats account info` as users of two
// accounts and of the global account against bus and the reference, and
// compares what it reports: the account, whether it is the system
// account, the account's max_payload, and JetStream (none in the
// scenario).
func TestNatsCLIAccountInfo(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	p := startAccountsPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		var steps []string
		for _, u := range []string{"a1", "c1", "g", "admin"} {
			out, err := runCLI(t, ctx, bin, url, "--user", u, "--password", accountsPass, "account", "info")
			if err != nil {
				t.Fatalf("%s: %v\n%s", u, err, out)
			}
			steps = append(steps, u+": "+strings.Join(cliFacts(out, "User", "Account", "System Account", "Maximum Payload", "JetStream"), "; "))
		}
		outcomes[t.Name()] = steps
	})
	sameOutcomes(t, outcomes["TestNatsCLIAccountInfo/reference"], outcomes["TestNatsCLIAccountInfo/bus"])
}

// cliFacts are the lines of a CLI report that start with one of labels,
// trimmed, in order.
func cliFacts(out string, labels ...string) []string {
	var facts []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		for _, l := range labels {
			if strings.HasPrefix(line, l+":") || strings.HasPrefix(line, l+" ") {
				facts = append(facts, strings.Join(strings.Fields(line), " "))
				break
			}
		}
	}
	return facts
}

// TestNatsCLIAccountInfoJetStream compares `nats account info` of an
// account with JetStream limits: what it reports of them.
func TestNatsCLIAccountInfoJetStream(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	bus := startBus(t, accountsJSBusOptions(t.TempDir()))
	ref := startReferenceConfig(t, accountsJSReferenceConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	outcomes := map[string][]string{}
	for side, url := range map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()} {
		var steps []string
		for _, u := range []string{"a1", "b1", "n1"} {
			out, err := runCLI(t, ctx, bin, url, "--user", u, "--password", accountsPass, "account", "info")
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", side, u, err, out)
			}
			steps = append(steps, u+": "+strings.Join(cliFacts(out, "Account", "JetStream", "Memory", "Storage", "Streams", "Consumers", "Consumer Maximum Ack Pending", "Could not obtain"), "; "))
		}
		outcomes[side] = steps
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}

// TestNatsCLIServerReportAccounts compares `nats server report
// accounts`, as the system account's admin, with connections in two
// accounts: which accounts it lists, with how many connections.
func TestNatsCLIServerReportAccounts(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	p := startAccountsPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	outcomes := map[string][]string{}
	p.each(t, func(t *testing.T, url, _ string) {
		connectAs(t, url, "a1")
		connectAs(t, url, "a2")
		connectAs(t, url, "b1")
		out, err := runCLI(t, ctx, bin, url, "--user", "admin", "--password", accountsPass, "server", "report", "accounts", "--json")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var report []struct {
			Account     string `json:"account"`
			Connections int    `json:"connections"`
		}
		if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &report); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var lines []string
		for _, r := range report {
			lines = append(lines, fmt.Sprintf("%s %d", r.Account, r.Connections))
		}
		slices.Sort(lines)
		outcomes[strings.TrimPrefix(t.Name(), "TestNatsCLIServerReportAccounts/")] = lines
	})
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
	if got := strings.Join(outcomes["bus"], ", "); !strings.Contains(got, "A 2") || !strings.Contains(got, "B 1") {
		t.Errorf("bus reports %s", got)
	}
}
