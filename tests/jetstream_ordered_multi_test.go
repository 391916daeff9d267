package tests

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// An ordered consumer with two filter subjects gets the messages of both
// subjects, in order. (The create with no name in the subject,
// $JS.API.CONSUMER.CREATE.<stream>, is checked against the reference in
// jetstream_diff_test.go.)
func TestOrderedConsumerWithTwoFilters(t *testing.T) {
	t.Parallel()
	_, js := startJS(t)
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OM", Subjects: []string{"om.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"om.a", "om.b", "om.c", "om.a"} {
		if _, err := js.Publish(ctx, subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"om.a", "om.b"}})
	if err != nil {
		t.Fatalf("ordered consumer with two filters: %v", err)
	}
	var got []string
	for len(got) < 3 {
		m, err := c.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got = append(got, m.Subject())
	}
	if got[0] != "om.a" || got[1] != "om.b" || got[2] != "om.a" {
		t.Fatalf("got %v, want om.a om.b om.a", got)
	}
}
