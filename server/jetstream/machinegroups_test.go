package jetstream

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/bus-dev/bus/jetlog"
)

// describeGroups renders the busy groups for the transcripts' state
// command: each group's in-flight seqs, tombstone and held-back seqs.
func describeGroups(t *groups) string {
	var b strings.Builder
	for _, key := range slices.Sorted(maps.Keys(t.byKey)) {
		g := t.byKey[key]
		var inflight []uint64
		for seq, h := range t.seqs {
			if h == g && seq != g.tomb && (len(g.held) == 0 || seq < g.held[0]) {
				inflight = append(inflight, seq)
			}
		}
		slices.Sort(inflight)
		fmt.Fprintf(&b, "\ngroup %q in flight %v", key, inflight)
		if g.tomb != 0 {
			fmt.Fprintf(&b, " tombstone %d", g.tomb)
		}
		if len(g.held) > 0 {
			fmt.Fprintf(&b, " held %v", g.held)
		}
	}
	ready := slices.Clone([]uint64(t.ready))
	slices.Sort(ready)
	fmt.Fprintf(&b, "\nheld %d tombstones %d ready %v", t.held, t.tombs, ready)
	return b.String()
}

func TestSubjectToken(t *testing.T) {
	for _, tc := range []struct {
		subject string
		pos     int
		want    string
		ok      bool
	}{
		{"orders.eu.42", 1, "orders", true},
		{"orders.eu.42", 2, "eu", true},
		{"orders.eu.42", 3, "42", true},
		{"orders.eu.42", 4, "", false},
		{"orders.eu.42", -1, "42", true},
		{"orders.eu.42", -3, "orders", true},
		{"orders.eu.42", -4, "", false},
		{"single", 1, "single", true},
		{"single", -1, "single", true},
		{"single", 2, "", false},
	} {
		got, ok := subjectToken(tc.subject, tc.pos)
		if got != tc.want || ok != tc.ok {
			t.Errorf("subjectToken(%q, %d) = %q, %v; want %q, %v", tc.subject, tc.pos, got, ok, tc.want, tc.ok)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = subjectToken("orders.eu.42", -2) }); n != 0 {
		t.Errorf("subjectToken allocates %v times", n)
	}
}

func TestGroupKeyLookupAllocatesNothing(t *testing.T) {
	hdr := []byte("NATS/1.0\r\nTrace: x\r\nOrder-Id: 42\r\n\r\n")
	msg := jetlog.Msg{Seq: 1, Subject: "orders.eu.42", Header: hdr}
	for _, by := range []groupBy{{Header: "order-id"}, {Token: -1}} {
		g := newGroups(by)
		g.byKey["42"] = &group{key: "42"}
		if got, keyed := g.find(msg); got == nil || !keyed {
			t.Fatalf("%+v: find = %v, %v", by, got, keyed)
		}
		if n := testing.AllocsPerRun(100, func() { g.find(msg) }); n != 0 {
			t.Errorf("%+v: find allocates %v times", by, n)
		}
	}
}

// TestGroupByConfig checks x_bus_group_by's validation: each refusal is
// 400 with bus's err_code 10400.
func TestGroupByConfig(t *testing.T) {
	t.Parallel()
	scfg := streamConfig{Name: "S", Subjects: []string{"s.>"}}
	for _, tc := range []struct {
		name, cfg, err string
	}{
		{"header", `{"ack_policy":"explicit","x_bus_group_by":{"header":"Order-Id"}}`, ""},
		{"token", `{"ack_policy":"explicit","x_bus_group_by":{"token":2}}`, ""},
		{"token_from_the_end", `{"ack_policy":"explicit","x_bus_group_by":{"token":-1}}`, ""},
		{"push", `{"ack_policy":"explicit","deliver_subject":"out","x_bus_group_by":{"token":2}}`, ""},
		{"empty", `{"ack_policy":"explicit","x_bus_group_by":{}}`, "exactly one of"},
		{"both", `{"ack_policy":"explicit","x_bus_group_by":{"header":"K","token":1}}`, "exactly one of"},
		{"bad_header", `{"ack_policy":"explicit","x_bus_group_by":{"header":"Order Id"}}`, "not a valid header name"},
		{"colon_header", `{"ack_policy":"explicit","x_bus_group_by":{"header":"K:"}}`, "not a valid header name"},
		{"token_range", `{"ack_policy":"explicit","x_bus_group_by":{"token":300}}`, "out of range"},
		{"ack_none", `{"ack_policy":"none","x_bus_group_by":{"token":1}}`, "requires ack_policy explicit"},
		{"ack_all", `{"ack_policy":"all","x_bus_group_by":{"token":1}}`, "requires ack_policy explicit"},
		{"ack_wait", `{"ack_policy":"explicit","ack_wait":631152000000000000,"x_bus_group_by":{"token":1}}`, "ack_wait of at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cfg consumerConfig
			if err := json.Unmarshal([]byte(tc.cfg), &cfg); err != nil {
				t.Fatal(err)
			}
			cfg.Durable = "C"
			e := cfg.normalize(scfg)
			switch {
			case tc.err == "" && e != nil:
				t.Fatalf("refused: %v", e)
			case tc.err == "":
				return
			case e == nil:
				t.Fatalf("accepted, want %q", tc.err)
			case e.Code != 400 || e.ErrCode != errCodeGroupBy || !strings.Contains(e.Description, tc.err):
				t.Fatalf("got %d/%d %q, want 400/%d %q", e.Code, e.ErrCode, e.Description, errCodeGroupBy, tc.err)
			}
		})
	}
}

func TestGroupByCannotBeUpdated(t *testing.T) {
	t.Parallel()
	old := consumerConfig{Name: "C", AckPolicy: AckExplicit, GroupBy: &groupBy{Token: 1}}
	for _, by := range []*groupBy{nil, {Token: 2}, {Header: "K"}} {
		cfg := old
		cfg.GroupBy = by
		if e := checkConsumerUpdate(old, cfg); e == nil || e.ErrCode != errCodeGroupBy {
			t.Errorf("update to %+v: %v, want %d", by, e, errCodeGroupBy)
		}
	}
	same := old
	same.GroupBy = &groupBy{Token: 1}
	if e := checkConsumerUpdate(old, same); e != nil {
		t.Errorf("same grouping refused: %v", e)
	}
}
