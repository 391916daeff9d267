package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message schedules across kill -9: the server is killed at random
// moments while @at schedules come due and an @every keeps firing. Each
// @at fires exactly once (its schedule then purged), however the kills
// fall around its firing and its purge; the @every never produces the
// same scheduled time twice, and goes on firing after the last restart.
func TestSchedulesSurviveKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ats, cycles = 6, 6

	cmd, url := startBusProcess(t, dir)
	js := schedClient(t, url)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "SCH", Subjects: []string{"sch.>"}, AllowMsgSchedules: true}); err != nil {
		t.Fatal(err)
	}
	schedule := func(subject, pattern, target string) {
		m := nats.NewMsg(subject)
		m.Header.Set("Nats-Schedule", pattern)
		m.Header.Set("Nats-Schedule-Target", target)
		m.Data = []byte(subject)
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatalf("schedule %s: %v", subject, err)
		}
	}
	schedule("sch.every", "@every 1s", "sch.out.every")
	start := time.Now().Truncate(time.Second)
	for k := range ats {
		at := start.Add(time.Duration(k+2) * time.Second).UTC().Format(time.RFC3339)
		schedule(fmt.Sprintf("sch.at.%d", k), "@at "+at, fmt.Sprintf("sch.out.at.%d", k))
	}

	for cycle := range cycles {
		time.Sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond) // the kill falls anywhere
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		cmd, url = startBusProcess(t, dir)
		js = schedClient(t, url)
		t.Logf("cycle %d: killed and restarted", cycle)
	}
	restarted := time.Now()

	st, err := js.Stream(ctx, "SCH")
	if err != nil {
		t.Fatal(err)
	}
	// Every @at came due before or during the kills, or comes due now.
	var counts map[string]uint64
	fired := 0
	if !waitFor(20*time.Second, func() bool { // schedules fire on whole seconds
		counts = subjectCounts(t, ctx, st)
		fired = 0
		for k := range ats {
			if counts[fmt.Sprintf("sch.out.at.%d", k)] > 0 {
				fired++
			}
		}
		return fired == ats && len(nextTimes(ctx, t, js, "sch.out.every", restarted)) > 0
	}) {
		t.Fatalf("after the kills: %d of %d @at schedules fired, counts %v", fired, ats, counts)
	}
	counts = subjectCounts(t, ctx, st)
	for k := range ats {
		if n := counts[fmt.Sprintf("sch.out.at.%d", k)]; n != 1 {
			t.Errorf("@at schedule %d fired %d times", k, n)
		}
		if n := counts[fmt.Sprintf("sch.at.%d", k)]; n != 0 {
			t.Errorf("@at schedule %d still held after firing", k)
		}
	}
	seen := map[string]bool{}
	for _, next := range nextTimes(ctx, t, js, "sch.out.every", time.Time{}) {
		if seen[next] {
			t.Errorf("@every produced its firing before %s twice", next)
		}
		seen[next] = true
	}
	t.Logf("@every fired %d times over %d kills; counts %v", len(seen), cycles, counts)
}

func schedClient(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// nextTimes reads the Nats-Schedule-Next header of every message stored
// on subject at or after since.
func nextTimes(ctx context.Context, t *testing.T, js jetstream.JetStream, subject string, since time.Time) []string {
	t.Helper()
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if !since.IsZero() {
		cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
	}
	c, err := js.OrderedConsumer(ctx, "SCH", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		batch, err := c.FetchNoWait(100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			out = append(out, m.Headers().Get("Nats-Schedule-Next"))
			n++
		}
		if batch.Error() != nil {
			t.Fatal(batch.Error())
		}
		if n == 0 {
			return out
		}
	}
}
