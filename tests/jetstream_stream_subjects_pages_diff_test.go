package tests

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// streamSubjectPagesScenario: STREAM.INFO's subjects_filter over more
// subjects than one page holds (the reference's 100,000), paged as
// "nats stream subjects" pages it, and from offsets inside a page, at
// the end and past it: each answer's paging fields, its first and last
// subject in byte order and the sum of its counts. The pages after the
// first are served from the sorted list bus keeps between pages.
func streamSubjectPagesScenario(t *testing.T, url string) []string {
	const subjects = 100_010
	js, ctx := scenarioJS(t, url, 2*time.Minute)
	nc := connect(t, url)
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "P", Subjects: []string{"p.>"}})
	must(t, err)
	for i := range subjects {
		subject := "p." + strconv.Itoa(i)
		if i%10 == 0 {
			subject = "p.even." + strconv.Itoa(i) // a second token level
		}
		if _, err := js.PublishAsync(subject, nil); err != nil {
			t.Fatal(err)
		}
		if i%1_000 == 999 { // under nats.go's 4,000 outstanding async publishes
			waitAsync(t, js)
		}
	}
	_, err = js.PublishAsync("p.7", nil) // one subject with two messages
	must(t, err)
	waitAsync(t, js)
	var out []string
	for _, body := range []string{
		`{"subjects_filter":"p.>"}`,
		`{"subjects_filter":"p.>","offset":100000}`,
		`{"subjects_filter":"p.>","offset":99999}`,
		`{"subjects_filter":"p.>","offset":100010}`,
		`{"subjects_filter":"p.>","offset":5}`,
		`{"subjects_filter":"p.*","offset":90000}`,
		`{"subjects_filter":"p.even.*","offset":1}`,
		`{"subjects_filter":">","offset":100009}`,
	} {
		msg, err := nc.Request("$JS.API.STREAM.INFO.P", []byte(body), 30*time.Second)
		must(t, err)
		var resp struct {
			Total  int `json:"total"`
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
			State  struct {
				Subjects map[string]uint64 `json:"subjects"`
			} `json:"state"`
		}
		must(t, json.Unmarshal(msg.Data, &resp))
		names := slices.Sorted(maps.Keys(resp.State.Subjects))
		var sum uint64
		for _, n := range resp.State.Subjects {
			sum += n
		}
		first, last := "", ""
		if len(names) > 0 {
			first, last = names[0], names[len(names)-1]
		}
		out = append(out, fmt.Sprintf("%s: total=%d offset=%d limit=%d subjects=%d first=%s last=%s messages=%d",
			body, resp.Total, resp.Offset, resp.Limit, len(names), first, last, sum))
	}
	return out
}

func waitAsync(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(time.Minute):
		t.Fatal("async publishes not acked within a minute")
	}
}

func TestJetStreamStreamSubjectPagesMatchReference(t *testing.T) {
	if testing.Short() {
		t.Skip("publishes 100,010 messages to each server")
	}
	want := streamSubjectPagesScenario(t, startReference(t, true).ClientURL())
	got := streamSubjectPagesScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, want, got)
}
