package server

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

func TestMonitorClosedRing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, added int
		want       string // cids kept, oldest first
	}{
		{3, 0, ""},
		{3, 2, "1,2"},
		{3, 3, "1,2,3"},
		{3, 4, "2,3,4"},
		{3, 8, "6,7,8"},
		{1, 5, "5"},
		{0, 2, ""},
	} {
		t.Run(fmt.Sprintf("max=%d/added=%d", tc.max, tc.added), func(t *testing.T) {
			r := newClosedRing(tc.max)
			for i := 1; i <= tc.added; i++ {
				r.add(&closedConn{info: ConnInfo{Cid: uint64(i)}})
			}
			var got []string
			for _, cc := range r.list() {
				got = append(got, fmt.Sprint(cc.info.Cid))
			}
			if s := strings.Join(got, ","); s != tc.want {
				t.Fatalf("kept %q, want %q", s, tc.want)
			}
		})
	}
}

func TestMonitorConnzSorts(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	stop := func(s int64) *time.Time { t := at(s); return &t }
	conns := []*ConnInfo{
		{Cid: 1, NumSubs: 1, Pending: 30, OutMsgs: 5, InMsgs: 1, OutBytes: 50, InBytes: 9, LastActivity: at(900), Start: at(100), Reason: "Stale Connection", Stop: stop(950), RoundTrip: 3},
		{Cid: 2, NumSubs: 3, Pending: 10, OutMsgs: 1, InMsgs: 7, OutBytes: 70, InBytes: 1, LastActivity: at(990), Start: at(500), Reason: "Client Closed", Stop: stop(990), RoundTrip: 1},
		{Cid: 3, NumSubs: 2, Pending: 20, OutMsgs: 3, InMsgs: 4, OutBytes: 10, InBytes: 5, LastActivity: at(500), Start: at(800), Reason: "Authentication Failure", Stop: stop(900), RoundTrip: 2},
	}
	for key, want := range map[string]string{
		"cid": "1,2,3", "start": "1,2,3", "subs": "2,3,1", "pending": "1,3,2", "msgs_to": "1,3,2",
		"msgs_from": "2,3,1", "bytes_to": "2,1,3", "bytes_from": "1,3,2", "last": "2,1,3", "idle": "3,1,2",
		"uptime": "3,2,1", "stop": "2,1,3", "reason": "3,2,1", "rtt": "1,3,2",
	} {
		list := slices.Clone(conns)
		slices.SortStableFunc(list, func(a, b *ConnInfo) int { return connzSorts[key](a, b, now) })
		var got []string
		for _, ci := range list {
			got = append(got, fmt.Sprint(ci.Cid))
		}
		if s := strings.Join(got, ","); s != want {
			t.Errorf("sort=%s: %s, want %s", key, s, want)
		}
	}
	if len(connzSorts) != 14 {
		t.Errorf("%d sort keys, the reference has 14", len(connzSorts))
	}
}

func TestMonitorPage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ n, offset, limit, lo, hi int }{
		{5, 0, 1024, 0, 5}, {5, 2, 2, 2, 4}, {5, 4, 10, 4, 5}, {5, 5, 1, 5, 5}, {5, 9, 1, 5, 5}, {5, -3, 2, 0, 2}, {0, 0, 10, 0, 0},
	} {
		if lo, hi := page(tc.n, tc.offset, tc.limit); lo != tc.lo || hi != tc.hi {
			t.Errorf("page(%d, %d, %d) = [%d, %d), want [%d, %d)", tc.n, tc.offset, tc.limit, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestMonitorFormats(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0s", 59 * time.Second: "59s", 61 * time.Second: "1m1s", 3601 * time.Second: "1h0m1s",
		25 * time.Hour: "1d1h0m0s", 366 * 24 * time.Hour: "1y1d0h0m0s",
	} {
		if got := monitor.Uptime(d); got != want {
			t.Errorf("Uptime(%v) = %q, want %q", d, got, want)
		}
	}
	for d, want := range map[time.Duration]string{
		1234567 * time.Nanosecond: "1.234567ms", 123456 * time.Nanosecond: "123µs", 900 * time.Nanosecond: "900ns",
	} {
		if got := rttString(d); got != want {
			t.Errorf("rttString(%v) = %q, want %q", d, got, want)
		}
	}
	for in, want := range map[string]string{
		"Client Closed": "Client Closed", "Authorization Violation": "Authentication Failure",
		"Read Error: connection reset": "Read Error", "Write Error: broken pipe": "Write Error",
		"Maximum Payload Violation": "Maximum Message Payload Exceeded", "Stale Connection": "Stale Connection",
		"Slow Consumer (Write Deadline)": "Slow Consumer (Write Deadline)", "Server Shutdown": "Server Shutdown",
		"Unknown Protocol Operation": "Parse Error", "TLS Handshake Error": "TLS Handshake Failure",
	} {
		if got := closedReason(in); got != want {
			t.Errorf("closedReason(%q) = %q, want %q", in, got, want)
		}
	}
}
