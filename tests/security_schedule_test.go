package tests

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// Issue #22, routes 4 and 5 for message schedules: a schedule is its
// publisher's, and fires only where that user may publish and reads only
// what she may read, when it is published and every time it is due.

// scheduleMsg is a schedule on subject, firing by pattern to target, with
// the other headers in kv (name, value, ...).
func scheduleMsg(subject, pattern, target string, kv ...string) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = []byte("from " + subject)
	m.Header.Set("Nats-Schedule", pattern)
	m.Header.Set("Nats-Schedule-Target", target)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Header.Set(kv[i], kv[i+1])
	}
	return m
}

// atNow is an @at that is already due: it fires at the scheduler's next
// run.
func atNow() string { return "@at " + time.Now().UTC().Format(time.RFC3339) }

// wantRefusedFor is wantRefused, naming user and subject.
func wantRefusedFor(t *testing.T, what string, err error, user, subject string) {
	t.Helper()
	wantRefused(t, what, err)
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (!strings.Contains(apiErr.Description, `"`+user+`"`) || !strings.Contains(apiErr.Description, `"`+subject+`"`)) {
		t.Errorf("%s: %q does not name %s and %s", what, apiErr.Description, user, subject)
	}
}

// Route 4: Nats-Schedule-Source would copy a subject eve may not read to
// one she may; route 5: Nats-Schedule-Target would have the server
// publish where she may not. Both publishes are refused, and nothing is
// stored on either target.
func TestScheduleSourceAndTargetNeedOwnersRights(t *testing.T) {
	t.Parallel()
	_, admin, eve := ownerServer(t)
	ctx := ctxT(t)
	st, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SCHED", Subjects: []string{"secret.s.>", "pub.s.>"}, AllowMsgSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Publish(ctx, "secret.s.x", []byte("the secret")); err != nil {
		t.Fatal(err)
	}
	at := atNow()
	_, err = eve.PublishMsg(ctx, scheduleMsg("pub.s.sched", at, "pub.s.leak", "Nats-Schedule-Source", "secret.s.x"))
	wantRefusedFor(t, "a schedule copying secret.s.x to pub.s.leak", err, "eve", "secret.s.x")
	_, err = eve.PublishMsg(ctx, scheduleMsg("pub.s.cmd", at, "secret.s.cmd"))
	wantRefusedFor(t, "a schedule targeting secret.s.cmd", err, "eve", "secret.s.cmd")

	// Her schedule inside her rights fires, due as the refused ones would
	// have been: once it has, they would have too.
	if _, err := eve.PublishMsg(ctx, scheduleMsg("pub.s.ok", at, "pub.s.out", "Nats-Schedule-Source", "pub.s.ok")); err == nil {
		t.Error("a schedule sourcing its own subject was accepted") // the reference's 10203: sanity of the headers
	}
	if _, err := eve.PublishMsg(ctx, scheduleMsg("pub.s.ok", at, "pub.s.out")); err != nil {
		t.Fatalf("a schedule inside her rights: %v", err)
	}
	waitCount(t, ctx, st, "pub.s.out", 1)
	for _, subject := range []string{"pub.s.leak", "secret.s.cmd"} {
		if m, err := st.GetLastMsgForSubject(ctx, subject); err == nil {
			t.Errorf("%s holds %q", subject, m.Data)
		}
	}
}

// A schedule is checked again every time it is due: a reload that takes
// its owner's publish right on the target stops it (a repeating one skips
// its firings, an @at is held, each logged once), and one that gives the
// right back lets it fire again (the held @at at once).
func TestScheduleFiringRecheckedWhenRightsChange(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	dir := t.TempDir()
	opts := func(mayPublishOut bool) server.Options {
		allow := []string{"$JS.API.>", "_INBOX.>", "pub.>"}
		if mayPublishOut {
			allow = append(allow, "out.>")
		}
		dave := server.User{Name: "dave", Password: "d", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: allow},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "pub.>"}},
		}}
		return server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, dave}}}
	}
	o := opts(true)
	s := startBus(t, o)
	admin, dave := jsAs(t, s, "admin", "a"), jsAs(t, s, "dave", "d")
	ctx := ctxT(t)
	st, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SCHED", Subjects: []string{"pub.r.>", "out.>"}, AllowMsgSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	count := func(subject string) uint64 { return countOf(t, ctx, st, subject) }
	// runs waits for n more firings of admin's schedule, which fires in
	// the same runs as dave's @every: once it has fired twice, a run that
	// began after whatever came before has ended.
	runs := func(n uint64) {
		t.Helper()
		waitCount(t, ctx, st, "out.admin", count("out.admin")+n)
	}
	publishSchedule(t, ctx, admin, "pub.r.admin", "@every 1s", "out.admin")
	publishSchedule(t, ctx, dave, "pub.r.every", "@every 1s", "out.every")
	waitCount(t, ctx, st, "out.every", 1)
	due := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	publishSchedule(t, ctx, dave, "pub.r.at", "@at "+due.UTC().Format(time.RFC3339), "out.at")

	o = opts(false)
	if err := s.Reload(o); err != nil {
		t.Fatal(err)
	}
	_, err = dave.PublishMsg(ctx, scheduleMsg("pub.r.new", "@every 1s", "out.new"))
	wantRefusedFor(t, "a schedule published after the reload", err, "dave", "out.new")
	runs(2)
	every := count("out.every")
	time.Sleep(time.Until(due)) // the time under test: the @at comes due while refused
	runs(2)
	if n := count("out.every"); n != every {
		t.Errorf("dave's @every fired %d times without the right", n-every)
	}
	if n := count("out.at"); n != 0 {
		t.Errorf("dave's @at fired without the right")
	}
	if n := strings.Count(logs.String(), "schedule not fired"); n != 2 {
		t.Errorf("%d refusals logged, want one for each schedule:\n%s", n, logs.String())
	}

	o = opts(true)
	if err := s.Reload(o); err != nil {
		t.Fatal(err)
	}
	waitCount(t, ctx, st, "out.at", 1)
	waitCount(t, ctx, st, "out.every", every+1)
	if got := waitGone(ctx, st, "pub.r.at"); got != "gone" {
		t.Errorf("the @at's schedule after it fired: %s", got)
	}
	if n := strings.Count(logs.String(), "schedule fires again"); n != 2 {
		t.Errorf("%d resumptions logged, want 2", n)
	}
}

// The owner is stored with the schedule (Bus-Schedule-Owner, set by the
// server over whatever the client sent), so a restart rebuilds the
// schedule as its publisher's, checked against her rights as they are
// then.
func TestScheduleOwnerSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := func(mayPublishOut bool) server.Options {
		allow := []string{"$JS.API.>", "_INBOX.>", "pub.>"}
		if mayPublishOut {
			allow = append(allow, "out.>")
		}
		dave := server.User{Name: "dave", Password: "d", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: allow},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "pub.>"}},
		}}
		return server.Options{JetStream: true, StoreDir: dir,
			Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, dave}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := startBus(t, opts(true))
	admin, dave := jsAs(t, first, "admin", "a"), jsAs(t, first, "dave", "d")
	st, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SCHED", Subjects: []string{"pub.r.>", "out.>"}, AllowMsgSchedules: true})
	if err != nil {
		t.Fatal(err)
	}
	publishSchedule(t, ctx, admin, "pub.r.admin", "@every 1s", "out.admin")
	if _, err := dave.PublishMsg(ctx, scheduleMsg("pub.r.every", "@every 1s", "out.every", "Bus-Schedule-Owner", "admin")); err != nil {
		t.Fatal(err)
	}
	m, err := st.GetLastMsgForSubject(ctx, "pub.r.every")
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Header.Values("Bus-Schedule-Owner"); len(got) != 1 || got[0] != "dave" {
		t.Errorf("stored Bus-Schedule-Owner %q, want dave's only", got)
	}
	waitCount(t, ctx, st, "out.every", 1)
	if m, err := st.GetLastMsgForSubject(ctx, "out.every"); err == nil && m.Header.Get("Bus-Schedule-Owner") != "" {
		t.Errorf("the produced message names the owner: %v", m.Header)
	}
	shutdown(t, first)

	second := startBus(t, opts(false))
	admin = jsAs(t, second, "admin", "a")
	if st, err = admin.Stream(ctx, "SCHED"); err != nil {
		t.Fatal(err)
	}
	every := countOf(t, ctx, st, "out.every")
	waitCount(t, ctx, st, "out.admin", countOf(t, ctx, st, "out.admin")+2)
	if n := countOf(t, ctx, st, "out.every"); n != every {
		t.Errorf("dave's schedule fired %d times after a restart without his right", n-every)
	}
}

// An atomic batch is a publish too: a schedule in it is its publisher's,
// checked when the batch commits.
func TestScheduleInBatchNeedsOwnersRights(t *testing.T) {
	t.Parallel()
	s, admin, _ := ownerServer(t)
	ctx := ctxT(t)
	st, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SCHED", Subjects: []string{"secret.s.>", "pub.s.>"}, AllowMsgSchedules: true, AllowAtomicPublish: true})
	if err != nil {
		t.Fatal(err)
	}
	eveNC := connect(t, busURL(s), nats.UserInfo("eve", "e"))
	at := atNow()
	got := rawPublish(eveNC, "pub.s.b", "b", "Nats-Batch-Id", "b1", "Nats-Batch-Sequence", "1", "Nats-Batch-Commit", "1",
		"Nats-Schedule", at, "Nats-Schedule-Target", "secret.s.cmd")
	if !strings.Contains(got, "10403") {
		t.Errorf("a batched schedule targeting secret.s.cmd: %s", got)
	}
	got = rawPublish(eveNC, "pub.s.ok", "ok", "Nats-Batch-Id", "b2", "Nats-Batch-Sequence", "1", "Nats-Batch-Commit", "1",
		"Nats-Schedule", at, "Nats-Schedule-Target", "pub.s.out")
	if !strings.HasPrefix(got, "ack") {
		t.Fatalf("a batched schedule inside her rights: %s", got)
	}
	waitCount(t, ctx, st, "pub.s.out", 1) // fires now, not only after a restart
	if m, err := st.GetLastMsgForSubject(ctx, "secret.s.cmd"); err == nil {
		t.Errorf("secret.s.cmd holds %q", m.Data)
	}
}
