package tests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// TestMessageSchedulesMatchReference runs one scenario of message
// schedules (allow_msg_schedules, Nats-Schedule) against the reference
// and bus side by side, and compares what a nats.go client sees: which
// configs are refused, the publish errors, and the messages the
// schedules produce with their headers.
func TestMessageSchedulesMatchReference(t *testing.T) {
	t.Parallel()
	var ref, got []string
	t.Run("servers", func(t *testing.T) {
		t.Run("reference", func(t *testing.T) {
			t.Parallel()
			ref = scheduleScenario(t, "nats://"+refAddr(startReference(t, true)))
		})
		t.Run("bus", func(t *testing.T) {
			t.Parallel()
			got = scheduleScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
		})
	})
	sameOutcomes(t, ref, got)
}

// scheduleScenario is the scenario: configs, then publish checks, then
// schedules firing (@at, @every, cron, with a source), then cancelling.
func scheduleScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	var out []string
	create := func(cfg jetstream.StreamConfig) jetstream.Stream {
		s, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
		return s
	}
	create(jetstream.StreamConfig{Name: "DN", Subjects: []string{"dn"}, AllowMsgSchedules: true, Discard: jetstream.DiscardNew})
	create(jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "X"}, AllowMsgSchedules: true})
	create(jetstream.StreamConfig{Name: "SRC", Sources: []*jetstream.StreamSource{{Name: "X"}}, AllowMsgSchedules: true})
	create(jetstream.StreamConfig{Name: "OFF", Subjects: []string{"off.>"}})
	create(jetstream.StreamConfig{Name: "NOTTL", Subjects: []string{"nottl.>"}, AllowMsgSchedules: true})
	s := create(jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, AllowMsgSchedules: true, AllowMsgTTL: true, DenyPurge: true})
	if s == nil {
		t.Fatal("stream S not created")
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := info.Config
	out = append(out, fmt.Sprintf("S echo: schedules=%v rollup=%v deny_purge=%v ttl=%v", c.AllowMsgSchedules, c.AllowRollup, c.DenyPurge, c.AllowMsgTTL))
	c.AllowMsgSchedules = false
	_, err = js.UpdateStream(ctx, c)
	out = append(out, "disable: "+scheduleErrOutcome(err))
	_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "OFF", Subjects: []string{"off.>"}, AllowMsgSchedules: true})
	out = append(out, "enable OFF: "+scheduleErrOutcome(err))
	_, err = js.UpdateStream(ctx, jetstream.StreamConfig{Name: "OFF", Subjects: []string{"off.>"}})
	out = append(out, "disable OFF: "+scheduleErrOutcome(err))
	create(jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>"}})

	// pub publishes with headers kv, and the label as the payload; an
	// ack's seq is reported unless the label ends in "!", where it
	// depends on how often a schedule fired by then.
	pub := func(label, subject string, kv ...string) {
		m := nats.NewMsg(subject)
		m.Data = []byte(label)
		for i := 0; i+1 < len(kv); i += 2 {
			m.Header.Set(kv[i], kv[i+1])
		}
		ack, err := js.PublishMsg(ctx, m)
		switch {
		case err == nil && strings.HasSuffix(label, "!"):
			out = append(out, label+": ok")
		case err == nil:
			out = append(out, fmt.Sprintf("%s: seq %d", label, ack.Sequence))
		default:
			out = append(out, label+": "+scheduleErrOutcome(err))
		}
	}
	far := "@at " + time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	pub("disabled", "plain.a", "Nats-Schedule", far, "Nats-Schedule-Target", "plain.b")
	pub("disabled bad pattern", "plain.a", "Nats-Schedule", "bogus")
	pub("disabled bad zone", "plain.a", "Nats-Schedule-Time-Zone", "Mars/Olympus")
	pub("disabled scheduler", "plain.a", "Nats-Scheduler", "plain.b")
	for _, p := range []string{"bogus", "@every 500ms", "@every x", "@at tomorrow", "* * * * *", "0 0 0 30 2 *",
		"0 0 0 * * 7", "60 * * * * *", "0 0 0 1 13 *", "1-2-3 * * * * *", "*/0 * * * * *", "5-1 * * * * *"} {
		pub("pattern "+p, "s.bad", "Nats-Schedule", p, "Nats-Schedule-Target", "s.out.bad")
	}
	for _, p := range []string{"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually",
		"0 0 12 * jan-mar mon-fri", "0 30 9 1,15 * ?", "0 0 0 1 JAN *", "*/15 0 0 1 1 *", "0 0 0 1 1 */2", "0,,1 0 0 1 1 *"} {
		pub("pattern "+p, "s.valid", "Nats-Schedule", p, "Nats-Schedule-Target", "s.out.valid")
	}
	pub("pattern @at in an hour", "s.valid", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.valid")
	pub("zone ok", "s.valid", "Nats-Schedule", "0 0 0 1 1 *", "Nats-Schedule-Time-Zone", "America/New_York", "Nats-Schedule-Target", "s.out.valid")
	pub("zone bad", "s.valid", "Nats-Schedule", "0 0 0 1 1 *", "Nats-Schedule-Time-Zone", "Mars/Olympus", "Nats-Schedule-Target", "s.out.valid")
	pub("zone with @at", "s.valid", "Nats-Schedule", far, "Nats-Schedule-Time-Zone", "UTC", "Nats-Schedule-Target", "s.out.valid")
	pub("no target", "s.v", "Nats-Schedule", far)
	pub("target is subject", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.v")
	pub("target outside", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "elsewhere")
	pub("target wildcard", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.*")
	pub("ttl bad", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.v", "Nats-Schedule-TTL", "bogus")
	pub("ttl disabled", "nottl.v", "Nats-Schedule", far, "Nats-Schedule-Target", "nottl.out", "Nats-Schedule-TTL", "5m")
	pub("schedule rollup all", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.v", "Nats-Schedule-Rollup", "all")
	pub("rollup all", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.v", "Nats-Rollup", "all")
	pub("source is target", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.v", "Nats-Schedule-Source", "s.out.v")
	pub("source outside", "s.v", "Nats-Schedule", far, "Nats-Schedule-Target", "s.out.v", "Nats-Schedule-Source", "elsewhere")
	pub("scheduler alone", "s.v", "Nats-Scheduler", "s.valid")
	pub("next not purge", "s.v", "Nats-Schedule-Next", "soon", "Nats-Scheduler", "s.valid")
	pub("purge without scheduler", "s.v", "Nats-Schedule-Next", "purge")
	pub("plain", "s.plain", "X", "1")
	pub("purge of a plain subject", "s.v", "Nats-Schedule-Next", "purge", "Nats-Scheduler", "s.plain")
	pub("purge of nothing", "s.v", "Nats-Schedule-Next", "purge", "Nats-Scheduler", "s.nothing")
	pub("empty schedule", "s.v", "Nats-Schedule", "", "Nats-Schedule-Target", "s.out.v")

	// The schedules that fire.
	pub("price=42", "s.data", "X-Src", "data")
	past := "@at " + time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	pub("at", "s.at", "Nats-Schedule", past, "Nats-Schedule-Target", "s.out.at", "Nats-Schedule-TTL", "5m",
		"X-Custom", "kept", "Nats-Msg-Id", "at-1", "Nats-Expected-Stream", "S")
	pub("every", "s.every", "Nats-Schedule", "@every 1s", "Nats-Schedule-Target", "s.out.every", "Nats-Schedule-Rollup", "sub")
	pub("cron", "s.cron", "Nats-Schedule", "* * * * * *", "Nats-Schedule-Target", "s.out.cron")
	pub("sourced", "s.sourced", "Nats-Schedule", past, "Nats-Schedule-Target", "s.out.sourced", "Nats-Schedule-Source", "s.data")
	if sm, err := s.GetLastMsgForSubject(ctx, "s.every"); err == nil {
		out = append(out, "stored schedule: "+headerList(sm.Header))
	}
	produced := collectProduced(t, ctx, s, map[string]int{"s.out.at": 1, "s.out.every": 2, "s.out.cron": 1, "s.out.sourced": 1})
	for _, subj := range []string{"s.out.at", "s.out.sourced", "s.out.every", "s.out.cron"} {
		for i, m := range produced[subj] {
			out = append(out, fmt.Sprintf("%s #%d: %q %s", subj, i, m.Data(), headerList(m.Headers())))
		}
	}
	out = append(out, "every next: "+nextSpacing(produced["s.out.every"]))
	for _, subj := range []string{"s.at", "s.sourced"} {
		out = append(out, subj+" after firing: "+waitGone(ctx, s, subj))
	}

	// Cancelling: a purge naming the schedule, or a plain message on its subject.
	pub("cancel every!", "s.stop", "Nats-Schedule-Next", "purge", "Nats-Scheduler", "s.every")
	pub("cancel cron!", "s.cron", "X", "plain")
	out = append(out, "s.every after cancel: "+waitGone(ctx, s, "s.every"))
	before := subjectCounts(t, ctx, s)
	time.Sleep(1500 * time.Millisecond) // measuring: no firing after the cancel
	after := subjectCounts(t, ctx, s)
	out = append(out, fmt.Sprintf("after cancel: every %d more, cron %d more",
		after["s.out.every"]-before["s.out.every"], after["s.out.cron"]-before["s.out.cron"]))
	return out
}

// scheduleErrOutcome is an error's code and text, or ok.
func scheduleErrOutcome(err error) string {
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &apiErr):
		return fmt.Sprintf("%d %s", apiErr.ErrorCode, apiErr.Description)
	default:
		return err.Error()
	}
}

// headerList is a header in a server-independent form: sorted, with a
// time in Nats-Schedule-Next given as its shape.
func headerList(h nats.Header) string {
	var kv []string
	for k, vs := range h {
		for _, v := range vs {
			if k == "Nats-Schedule-Next" && v != "purge" {
				if _, err := time.Parse(time.RFC3339Nano, v); err == nil {
					v = "<time>"
				}
			}
			kv = append(kv, k+"="+v)
		}
	}
	slices.Sort(kv)
	return strings.Join(kv, " ")
}

// nextSpacing checks the Nats-Schedule-Next of an @every 1s schedule's
// messages: whole seconds, one apart.
func nextSpacing(msgs []jetstream.Msg) string {
	var prev time.Time
	for i, m := range msgs {
		next, err := time.Parse(time.RFC3339Nano, m.Headers().Get("Nats-Schedule-Next"))
		switch {
		case err != nil:
			return err.Error()
		case next.Nanosecond() != 0:
			return "not a whole second: " + next.String()
		case i > 0 && next.Sub(prev) != time.Second:
			return fmt.Sprintf("spacing %v", next.Sub(prev))
		}
		prev = next
	}
	return "whole seconds, 1s apart"
}

// collectProduced reads the stream's s.out.> messages until it has at
// least want of each subject (or time runs out).
func collectProduced(t *testing.T, ctx context.Context, s jetstream.Stream, want map[string]int) map[string][]jetstream.Msg {
	t.Helper()
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"s.out.>"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]jetstream.Msg{}
	enough := func() bool {
		for subj, n := range want {
			if len(got[subj]) < n {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(10 * time.Second)
	for !enough() && time.Now().Before(deadline) {
		m, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			continue
		}
		if subj := m.Subject(); len(got[subj]) < want[subj] {
			got[subj] = append(got[subj], m)
		}
	}
	if !enough() {
		t.Errorf("produced: have %v, want %v", countsOf(got), want)
	}
	return got
}

func countsOf(m map[string][]jetstream.Msg) map[string]int {
	c := map[string]int{}
	for k, v := range m {
		c[k] = len(v)
	}
	return c
}

// waitGone polls until subject holds no message (a schedule purged).
func waitGone(ctx context.Context, s jetstream.Stream, subject string) string {
	if waitFor(5*time.Second, func() bool {
		_, err := s.GetLastMsgForSubject(ctx, subject)
		return errors.Is(err, jetstream.ErrMsgNotFound)
	}) {
		return "gone"
	}
	return "still there"
}

// subjectCounts is the stream's message count per subject.
func subjectCounts(t *testing.T, ctx context.Context, s jetstream.Stream) map[string]uint64 {
	t.Helper()
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects
}
