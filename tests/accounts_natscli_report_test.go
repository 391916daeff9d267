package tests

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestNatsCLIServerReportJetStreamAccounts compares `nats server report
// jetstream`, as the system account's admin, with a stream and consumer
// in account A: the totals over every account, and the report of one
// account (--account), on bus and the reference.
func TestNatsCLIServerReportJetStreamAccounts(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	bus, ref := startAccountsSysPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	outcomes := map[string][]string{}
	for side, s := range map[string]struct{ url, id string }{"bus": {busURL(bus), bus.ID()}, "reference": {ref.ClientURL(), ref.ID()}} {
		accountsMonitorScenario(t, s.url)
		var steps []string
		for _, args := range [][]string{nil, {"--account", "A"}, {"--account", "B"}} {
			out, err := runCLI(t, ctx, bin, s.url, append([]string{"--user", "admin", "--password", accountsPass, "server", "report", "jetstream"}, args...)...)
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", side, args, err, out)
			}
			for _, row := range reportRows(out) {
				steps = append(steps, strings.Join(args, " ")+": "+strings.ReplaceAll(row, s.id, "<id>"))
			}
		}
		outcomes[side] = steps
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
	if len(outcomes["bus"]) == 0 || !strings.Contains(outcomes["bus"][0], "<id> |  | 1 | 1 | 1 |") {
		t.Errorf("bus reports %q", outcomes["bus"])
	}
}

// reportRows are the data rows of a CLI table (the lines after its
// header row), cells joined by " | ".
func reportRows(out string) []string {
	var rows []string
	header := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "│") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "│"), "│")
		if len(cells) < 3 {
			continue // the title
		}
		if !header {
			header = true
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, strings.Join(cells, " | "))
	}
	return rows
}
