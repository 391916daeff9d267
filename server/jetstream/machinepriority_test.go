package jetstream

import (
	"encoding/json"
	"strconv"
)

// pinCounter is the harness's newID: pin-1, pin-2, ... so that
// transcripts show which pin a delivery carries.
func pinCounter() func() string {
	n := 0
	return func() string {
		n++
		return "pin-" + strconv.Itoa(n)
	}
}

// advisorySummary is how a transcript shows an advisory: its ids and
// times change from run to run, so only a priority group's group, pin
// and reason.
func advisorySummary(data []byte) string {
	var a struct {
		Group, Reason string
		PinnedID      string `json:"pinned_id"`
	}
	if json.Unmarshal(data, &a) != nil || a.Group == "" {
		return "<advisory>"
	}
	if a.PinnedID != "" {
		return "<pinned " + a.Group + " " + a.PinnedID + ">"
	}
	return "<unpinned " + a.Group + " " + a.Reason + ">"
}
