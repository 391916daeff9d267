package tests

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestNatsCLIServerCommands runs `nats server …` as the system account's
// admin against bus and the reference configured alike, and compares what
// the CLI reports: its --json output where it has one, the labels and
// values it prints otherwise.
func TestNatsCLIServerCommands(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	p := startSysPair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cli := func(t *testing.T, url, user, pass string, args ...string) (string, error) {
		t.Helper()
		return runCLI(t, ctx, bin, url, append([]string{"--user", user, "--password", pass, "--timeout", "3s"}, args...)...)
	}
	type side struct{ name, url, id string }
	sides := []side{{"bus", p.busURL, p.bus.ID()}, {"reference", p.refURL, p.ref.ID()}}
	out := map[string]map[string]string{}
	for _, s := range sides {
		// A client in the global account with a stream, so that the
		// reports have something to show.
		nc := connect(t, s.url, nats.UserInfo(sysAll, sysAllPass), nats.Name("worker"))
		js, err := nc.JetStream()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.AddStream(&nats.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish("orders.1", []byte("x")); err != nil {
			t.Fatal(err)
		}
		out[s.name] = map[string]string{}
		for _, args := range [][]string{
			{"server", "list", "--json"},
			{"server", "ping", "1"},
			{"server", "info"},
			{"server", "info", s.id},
			{"server", "report", "jetstream"},
			{"server", "report", "connections"},
			{"server", "request", "varz"},
			{"server", "request", "connections", "--subscriptions"},
			{"server", "request", "jetstream", "--all"},
			{"server", "request", "subscriptions", "--detail"},
			{"server", "request", "accounts"},
			{"server", "request", "healthz"},
			{"server", "request", "routes"},
			{"server", "request", "gateways"},
			{"server", "request", "leafnodes"},
		} {
			text, err := cli(t, s.url, sysAdmin, sysAdminPass, args...)
			if err != nil {
				t.Fatalf("%s: nats %s: %v\n%s", s.name, strings.Join(args, " "), err, text)
			}
			key := strings.Join(args, " ")
			if args[len(args)-1] == s.id {
				key = "server info <id>"
			}
			out[s.name][key] = strings.ReplaceAll(text, s.id, "<id>")
		}
		// A global user is told to use a system account, as by the
		// reference; it may still ask who it is.
		if text, err := cli(t, s.url, sysApp, sysAppPass, "server", "list"); err == nil || !strings.Contains(text, "system") {
			t.Errorf("%s: nats server list as a global user: %v\n%s", s.name, err, text)
		}
		text, err := cli(t, s.url, sysApp, sysAppPass, "account", "info")
		if err != nil {
			t.Errorf("%s: nats account info as a global user: %v\n%s", s.name, err, text)
		}
		out[s.name]["account info"] = text
	}
	bus, ref := out["bus"], out["reference"]

	var busList, refList []map[string]any
	mustJSON(t, []byte(bus["server list --json"]), &busList)
	mustJSON(t, []byte(ref["server list --json"]), &refList)
	if len(busList) != 1 || len(refList) != 1 {
		t.Fatalf("server list: %d servers on bus, %d on the reference", len(busList), len(refList))
	}
	sameShape(t, "server list", busList[0], refList[0], sysNotServed)
	sameValues(t, "server list", busList[0], refList[0], "server.name", "server.id", "server.host", "server.jetstream",
		"statsz.connections", "statsz.total_connections", "statsz.active_accounts", "statsz.active_servers", "statsz.jetstream.stats.accounts")

	for _, key := range []string{"server ping 1"} {
		for name, text := range map[string]string{"bus": bus[key], "reference": ref[key]} {
			if !strings.Contains(text, "<id>") || !strings.Contains(text, "1 replies") {
				t.Errorf("%s %s:\n%s", name, key, text)
			}
		}
	}
	// server info: the same labels with the same values, but for what
	// differs between any two servers.
	for _, key := range []string{"server info", "server info <id>"} {
		b, r := labels(bus[key]), labels(ref[key])
		for label, rv := range r {
			bv, ok := b[label]
			switch {
			case label == "Configuration Digest": // bus writes no digest (docs/monitoring.md)
			case label == "Always sync writes to disk", label == "Write sync Frequency": // bus syncs per stream
			case !ok:
				t.Errorf("%s: bus prints no %q (reference: %q)", key, label, rv)
			case slices.Contains([]string{"Auth Required", "TLS Required", "Maximum Connections", "Maximum Payload", "Maximum Subscriptions", "Ping Interval", "Maximum Pings Outstanding", "Write Deadline", "Connections", "Total Connections", "Domain"}, label) && bv != rv:
				t.Errorf("%s: %s is %q on bus, %q on the reference", key, label, bv, rv)
			}
		}
	}
	for _, key := range []string{"server report jetstream", "server report connections"} {
		for name, text := range map[string]string{"bus": bus[key], "reference": ref[key]} {
			if !strings.Contains(text, "<id>") {
				t.Errorf("%s %s names no server:\n%s", name, key, text)
			}
		}
	}
	// The reports' tables: the same values in the columns that do not
	// depend on the server's version, id or timing.
	for _, tc := range []struct {
		key, row string
		columns  []string
	}{
		// Not bytes: the two stores' records differ in size.
		{"server report jetstream", "<id>", []string{"Streams", "Consumers", "Messages", "API Req"}},
		{"server report connections", "worker", []string{"Name", "Account", "Subs", "Server"}},
	} {
		b, r := tableRow(bus[tc.key], tc.row), tableRow(ref[tc.key], tc.row)
		for _, col := range tc.columns {
			if b[col] == "" && col != "Account" {
				t.Errorf("%s: no %s column in the row of %q:\n%s", tc.key, col, tc.row, bus[tc.key])
			}
			if b[col] != r[col] {
				t.Errorf("%s: %s is %q on bus, %q on the reference\nbus:\n%s\nreference:\n%s", tc.key, col, b[col], r[col], bus[tc.key], ref[tc.key])
			}
		}
	}
	if !strings.Contains(bus["server report connections"], "Top 2 Connections out of 2") || !strings.Contains(ref["server report connections"], "Top 2 Connections out of 2") {
		t.Errorf("report connections:\nbus:\n%s\nreference:\n%s", bus["server report connections"], ref["server report connections"])
	}
	// server request: each answer's data has the reference's fields.
	for key, rtext := range ref {
		if !strings.HasPrefix(key, "server request") {
			continue
		}
		var b, r map[string]any
		mustJSON(t, []byte(firstJSON(bus[key])), &b)
		mustJSON(t, []byte(firstJSON(rtext)), &r)
		if b["error"] != nil || b["data"] == nil {
			t.Errorf("%s: bus answered %v", key, b)
			continue
		}
		// Lists are compared by their first items, which need not be
		// the same subscription on both (max is set for some only).
		sameShape(t, key, b, r, sysNotServed, "data.subscriptions_list[].max")
	}
	// account info: the same user and account lines.
	for _, label := range []string{"User", "Account"} {
		if b, r := labels(bus["account info"])[label], labels(ref["account info"])[label]; b != r {
			t.Errorf("account info: %s is %q on bus, %q on the reference", label, b, r)
		}
	}
}

var labelLine = regexp.MustCompile(`^\s*([A-Z][A-Za-z /]+): ?(.*)$`)

// labels reads the "Label: value" lines the CLI prints.
func labels(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if m := labelLine.FindStringSubmatch(line); m != nil {
			out[strings.TrimSpace(m[1])] = strings.TrimSpace(m[2])
		}
	}
	return out
}

// firstJSON is the first JSON document in the CLI's output.
func firstJSON(text string) string {
	dec := json.NewDecoder(strings.NewReader(text[strings.Index(text, "{"):]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return "{}"
	}
	return string(raw)
}

// tableRow reads the row of a CLI table that contains text, keyed by the
// table's column headers (the first row of cells).
func tableRow(table, text string) map[string]string {
	var header []string
	out := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "│") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "│"), "│")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case len(cells) < 2:
			// the title row
		case header == nil:
			header = cells
		case strings.Contains(line, text):
			for i, c := range cells {
				if i < len(header) {
					out[header[i]] = c
				}
			}
			return out
		}
	}
	return out
}
