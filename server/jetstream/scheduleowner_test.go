package jetstream

import (
	"bytes"
	"testing"

	"github.com/bus-dev/bus/jetlog"
)

// The owner header is the server's: set over whatever a client sent on
// a schedule, left alone on other messages, and kept when the server acts
// for the operator ("").
func TestOwnedSchedule(t *testing.T) {
	schedule := []byte("NATS/1.0\r\nNats-Schedule: @every 1s\r\nbus-schedule-owner: admin\r\nBus-Schedule-Owner:  root \r\n\r\n")
	plain := []byte("NATS/1.0\r\nBus-Schedule-Owner: admin\r\n\r\n")
	for _, c := range []struct {
		name  string
		hdr   []byte
		owner string
		want  []string
	}{
		{"a client's forged owners are replaced", schedule, "eve", []string{"eve"}},
		{"the operator keeps what the message names", schedule, "", []string{"admin", "root"}},
		{"not a schedule: untouched", plain, "eve", []string{"admin"}},
		{"no headers", nil, "eve", nil},
	} {
		got := ownedSchedule(c.hdr, c.owner)
		var owners []string
		if len(got) > 0 {
			_, rest, _ := bytes.Cut(got, []byte("\r\n"))
			for key, line := range headerLines(rest) {
				if key != nil && isScheduleOwner(key) {
					_, v, _ := bytes.Cut(line, []byte(":"))
					owners = append(owners, string(bytes.TrimSpace(v)))
				}
			}
		}
		if len(owners) != len(c.want) {
			t.Errorf("%s: owners %q, want %q", c.name, owners, c.want)
			continue
		}
		for i := range owners {
			if owners[i] != c.want[i] {
				t.Errorf("%s: owners %q, want %q", c.name, owners, c.want)
			}
		}
		if c.hdr != nil && jetlog.HeaderValue(got, hdrSchedule) == nil && jetlog.HeaderValue(c.hdr, hdrSchedule) != nil {
			t.Errorf("%s: lost Nats-Schedule: %q", c.name, got)
		}
	}
}
