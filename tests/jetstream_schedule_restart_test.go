package tests

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// TestMessageSchedulesSurviveRestart: schedules are rebuilt from the
// stored messages when the stream opens again. An @at that came due
// while the server was down fires once after it starts (and its schedule
// is purged); an @every keeps firing.
func TestMessageSchedulesSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := startJSAt(t, dir)
	js := restartClient(t, first)
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, AllowMsgSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(2500 * time.Millisecond).Truncate(time.Second).Add(time.Second)
	publishSchedule(t, ctx, js, "s.at", "@at "+due.UTC().Format(time.RFC3339), "s.out.at")
	publishSchedule(t, ctx, js, "s.every", "@every 1s", "s.out.every")
	waitCount(t, ctx, s, "s.out.every", 1)
	if n := countOf(t, ctx, s, "s.out.at"); n != 0 {
		t.Fatalf("the @at fired before its time (%d)", n)
	}
	shutdown(t, first)

	time.Sleep(time.Until(due) + 300*time.Millisecond) // the delay under test: the @at comes due while down
	second := startJSAt(t, dir)
	t.Cleanup(func() { shutdown(t, second) })
	js = restartClient(t, second)
	s, err = js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	before := countOf(t, ctx, s, "s.out.every")
	waitCount(t, ctx, s, "s.out.at", 1)
	waitCount(t, ctx, s, "s.out.every", before+2)
	if got := waitGone(ctx, s, "s.at"); got != "gone" {
		t.Errorf("the fired @at's schedule: %s", got)
	}
	if n := countOf(t, ctx, s, "s.out.at"); n != 1 {
		t.Errorf("the @at fired %d times, want once", n)
	}
	m, err := s.GetLastMsgForSubject(ctx, "s.out.every")
	if err != nil {
		t.Fatal(err)
	}
	if m.Header.Get("Nats-Scheduler") != "s.every" {
		t.Errorf("produced message headers %v", m.Header)
	}
	if _, err := time.Parse(time.RFC3339Nano, m.Header.Get("Nats-Schedule-Next")); err != nil {
		t.Errorf("Nats-Schedule-Next: %v", err)
	}
}

func restartClient(t *testing.T, s *server.Server) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, busURL(s)))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func publishSchedule(t *testing.T, ctx context.Context, js jetstream.JetStream, subject, pattern, target string) {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Header.Set("Nats-Schedule", pattern)
	m.Header.Set("Nats-Schedule-Target", target)
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatalf("schedule %s: %v", subject, err)
	}
}

// countOf is how many messages subject holds in s.
func countOf(t *testing.T, ctx context.Context, s jetstream.Stream, subject string) uint64 {
	t.Helper()
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

// waitCount polls until subject holds at least n messages.
func waitCount(t *testing.T, ctx context.Context, s jetstream.Stream, subject string, n uint64) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool { return countOf(t, ctx, s, subject) >= n }) {
		t.Fatalf("%s: %d messages, want %d", subject, countOf(t, ctx, s, subject), n)
	}
}
