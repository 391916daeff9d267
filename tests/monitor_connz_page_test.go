package tests

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// /connz by cid describes only the page's open connections (the
// dashboard's list asks for it every poll); its pages are the ones the
// general path, which describes every connection, makes.
func TestConnzPageByCidMatchesTheFullListing(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{})
	const n = 12
	for i := range n {
		connect(t, busURL(s), nats.Name(fmt.Sprint("c", i)))
	}
	cids := func(cz *server.Connz) string {
		var out []uint64
		for _, ci := range cz.Conns {
			out = append(out, ci.Cid)
		}
		return fmt.Sprint(out)
	}
	for _, p := range []struct{ offset, limit int }{{0, 0}, {0, 5}, {3, 4}, {10, 5}, {12, 3}, {20, 1}, {-2, 3}} {
		for _, sort := range []string{"", "cid", "start"} {
			fast, err := s.Connz(server.ConnzOptions{Sort: sort, Offset: p.offset, Limit: p.limit})
			if err != nil {
				t.Fatal(err)
			}
			// With every connection open, state=all lists the same ones
			// through the general path.
			full, err := s.Connz(server.ConnzOptions{Sort: sort, State: server.ConnAll, Offset: p.offset, Limit: p.limit})
			if err != nil {
				t.Fatal(err)
			}
			if cids(fast) != cids(full) || fast.Total != n || full.Total != n || fast.NumConns != full.NumConns || fast.Offset != full.Offset {
				t.Errorf("offset %d limit %d sort %q: %s (total %d), the full listing %s (total %d)",
					p.offset, p.limit, sort, cids(fast), fast.Total, cids(full), full.Total)
			}
		}
	}
	first, _ := s.Connz(server.ConnzOptions{Limit: 3})
	if len(first.Conns) != 3 || first.Conns[0].Cid >= first.Conns[1].Cid || first.Conns[1].Cid >= first.Conns[2].Cid || first.Conns[0].Name == "" {
		t.Errorf("first page %+v", first.Conns)
	}
}
