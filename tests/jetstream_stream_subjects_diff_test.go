package tests

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// streamSubjectsScenario: STREAM.INFO's per-subject counts
// (subjects_filter) and their paging fields, from the first page, from an
// offset, past the end and for a filter that matches nothing. The
// reference's page is 100,000 subjects; paging past it is pinned by
// server/jetstream's TestSubjectsPage with a small page. Issue 28.
func streamSubjectsScenario(t *testing.T, url string) []string {
	js, ctx := scenarioJS(t, url, 20*time.Second)
	nc := connect(t, url)
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}})
	must(t, err)
	for _, subj := range []string{"s.1", "s.2", "s.3", "s.3", "s.10", "s.x.y"} {
		_, err := js.Publish(ctx, subj, nil)
		must(t, err)
	}
	var out []string
	for _, body := range []string{
		`{"subjects_filter":"s.*"}`,
		`{"subjects_filter":">"}`,
		`{"subjects_filter":">","offset":2}`,
		`{"subjects_filter":"s.*","offset":4}`,
		`{"subjects_filter":"s.*","offset":99}`,
		`{"subjects_filter":"s.*","offset":-3}`,
		`{"subjects_filter":"none.*"}`,
		`{"subjects_filter":"none.*","offset":1}`,
		`{}`,
	} {
		msg, err := nc.Request("$JS.API.STREAM.INFO.S", []byte(body), 5*time.Second)
		must(t, err)
		var resp struct {
			Total  int `json:"total"`
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
			State  struct {
				NumSubjects int               `json:"num_subjects"`
				Subjects    map[string]uint64 `json:"subjects"`
			} `json:"state"`
		}
		must(t, json.Unmarshal(msg.Data, &resp))
		var subjects []string
		for _, subj := range slices.Sorted(maps.Keys(resp.State.Subjects)) {
			subjects = append(subjects, fmt.Sprintf("%s=%d", subj, resp.State.Subjects[subj]))
		}
		out = append(out, fmt.Sprintf("%s: total=%d offset=%d limit=%d num_subjects=%d subjects=%v",
			body, resp.Total, resp.Offset, resp.Limit, resp.State.NumSubjects, subjects))
	}
	return out
}

func TestJetStreamStreamSubjectsMatchReference(t *testing.T) {
	t.Parallel()
	want := streamSubjectsScenario(t, startReference(t, true).ClientURL())
	got := streamSubjectsScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, want, got)
}
