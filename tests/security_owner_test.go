package tests

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// eve is the attacker of issue #22: she may drive the JetStream API and
// publish to pub.>, read pub.> and her inboxes, and never secret.>.
func eveUser() server.User {
	return server.User{Name: "eve", Password: "e", Permissions: &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "$JS.ACK.>", "pub.>", "_INBOX.>"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"pub.>", "_INBOX.>"}, Deny: []string{"secret.>"}},
	}}
}

// ownerServer runs bus with admin (all rights) and eve, and admin's
// stream SECRET on secret.main.> holding one message.
func ownerServer(t *testing.T, users ...server.User) (*server.Server, jetstream.JetStream, jetstream.JetStream) {
	t.Helper()
	all := append([]server.User{{Name: "admin", Password: "a"}, eveUser()}, users...)
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{Users: all}})
	admin, eve := jsAs(t, s, "admin", "a"), jsAs(t, s, "eve", "e")
	ctx := ctxT(t)
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SECRET", Subjects: []string{"secret.main.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Publish(ctx, "secret.main.x", []byte("the secret")); err != nil {
		t.Fatal(err)
	}
	return s, admin, eve
}

// wantRefused fails unless err is bus's 10403 permissions error.
func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10403 {
		t.Errorf("%s: %v, want err_code 10403", what, err)
	}
}

// Route 2: a transform must not launder a subject its owner may not read,
// whether it is the stream's own, a source's or a mirror's, at create or
// at update.
func TestOwnerTransformsNeedReadRights(t *testing.T) {
	t.Parallel()
	_, admin, eve := ownerServer(t)
	ctx := ctxT(t)
	_, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "T1", Subjects: []string{"secret.t1.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "secret.t1.>", Destination: "pub.t1.>"}})
	wantRefused(t, "a stream transforming secret.t1.> to pub.t1.>", err)

	// A stream of her own on secret.t2.> stores secrets she cannot read:
	// allowed. Adding the transform is not.
	if _, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "T2", Subjects: []string{"secret.t2.>"}}); err != nil {
		t.Fatalf("a plain stream on secret.t2.>: %v", err)
	}
	_, err = eve.UpdateStream(ctx, jetstream.StreamConfig{Name: "T2", Subjects: []string{"secret.t2.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "secret.t2.>", Destination: "pub.t2.>"}})
	wantRefused(t, "an update adding the transform", err)

	_, err = eve.CreateStream(ctx, jetstream.StreamConfig{Name: "S1", Sources: []*jetstream.StreamSource{{
		Name: "SECRET", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "secret.main.>", Destination: "pub.s1.>"}},
	}}})
	wantRefused(t, "a source of SECRET transformed to pub.s1.>", err)
	_, err = eve.CreateStream(ctx, jetstream.StreamConfig{Name: "S2", Sources: []*jetstream.StreamSource{{Name: "SECRET"}}})
	wantRefused(t, "an unfiltered source of SECRET", err)
	_, err = eve.CreateStream(ctx, jetstream.StreamConfig{Name: "M1", Mirror: &jetstream.StreamSource{
		Name: "SECRET", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "secret.main.>", Destination: "pub.m1.>"}},
	}})
	wantRefused(t, "a mirror of SECRET transformed to pub.m1.>", err)

	// A source declared before its origin exists is checked when the
	// origin appears: it copies nothing and says why.
	if _, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "LATER", Sources: []*jetstream.StreamSource{{
		Name: "SECRET2", SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: "secret2.>", Destination: "pub.later.>"}},
	}}}); err != nil {
		t.Fatalf("a source of a stream not there yet: %v", err)
	}
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "SECRET2", Subjects: []string{"secret2.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Publish(ctx, "secret2.x", []byte("the second secret")); err != nil {
		t.Fatal(err)
	}
	later, err := admin.Stream(ctx, "LATER")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		info, err := later.Info(ctx)
		return err == nil && len(info.Sources) == 1 && info.Sources[0].Error != nil && info.Sources[0].Error.ErrorCode == 10403
	})
	if info, _ := later.Info(ctx); info.State.Msgs != 0 {
		t.Errorf("LATER copied %d secrets", info.State.Msgs)
	}
	// Eve may not take what admin sets up: a transform inside her rights
	// is hers.
	if _, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "T3", Subjects: []string{"pub.in.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "pub.in.>", Destination: "pub.out.>"}}); err != nil {
		t.Errorf("a transform inside her rights: %v", err)
	}
}

// Routes 3 and 5: republish reads what the stream stores and publishes
// where its destination reaches, both as its owner; a push consumer
// delivers to its deliver subject as its owner.
func TestOwnerRepublishAndDeliverSubjectNeedRights(t *testing.T) {
	t.Parallel()
	s, admin, eve := ownerServer(t)
	ctx := ctxT(t)
	_, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "R1", Subjects: []string{"secret.r.>"},
		RePublish: &jetstream.RePublish{Source: ">", Destination: "pub.r.>"}})
	wantRefused(t, "republishing secret.r.> to pub.r.>", err)
	_, err = eve.CreateStream(ctx, jetstream.StreamConfig{Name: "R2", Subjects: []string{"pub.c.>"},
		RePublish: &jetstream.RePublish{Source: ">", Destination: "cmd.>"}})
	wantRefused(t, "republishing to cmd.>, where she may not publish", err)
	_, err = eve.CreateStream(ctx, jetstream.StreamConfig{Name: "R3", Subjects: []string{"pub.ok.>"},
		RePublish: &jetstream.RePublish{Source: "pub.ok.>", Destination: "pub.copy.>"}})
	if err != nil {
		t.Fatalf("republishing inside her rights: %v", err)
	}
	_, err = admin.CreateStream(ctx, jetstream.StreamConfig{Name: "PUB", Subjects: []string{"pub.p.>"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eve.CreateOrUpdateConsumer(ctx, "PUB", jetstream.ConsumerConfig{Durable: "PUSH", DeliverSubject: "cmd.deliver", AckPolicy: jetstream.AckExplicitPolicy})
	wantRefused(t, "a push consumer delivering to cmd.deliver", err)

	// Nothing reached admin's cmd.> or eve's pub.r.>.
	adminNC := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	cmd, _ := adminNC.SubscribeSync("cmd.>")
	eveNC := connect(t, busURL(s), nats.UserInfo("eve", "e"))
	leak, _ := eveNC.SubscribeSync("pub.r.>")
	_ = adminNC.Flush()
	_ = eveNC.Flush()
	for _, subj := range []string{"secret.r.x", "pub.c.x", "pub.p.x"} {
		_ = adminNC.Publish(subj, []byte(subj))
	}
	_ = adminNC.Flush()
	if m, err := leak.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("eve received %q on %s", m.Data, m.Subject)
	}
	if m, err := cmd.NextMsg(50 * time.Millisecond); err == nil {
		t.Errorf("admin's cmd.> received %q on %s", m.Data, m.Subject)
	}
}

// Route 6a: an unfiltered consumer reads everything its stream may hold,
// which for a mirror (no subjects of its own) is what it copies.
func TestOwnerConsumerOnMirrorNeedsTheOriginsRights(t *testing.T) {
	t.Parallel()
	_, admin, eve := ownerServer(t)
	ctx := ctxT(t)
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "MIRROR", Mirror: &jetstream.StreamSource{Name: "SECRET"}}); err != nil {
		t.Fatal(err)
	}
	_, err := eve.CreateOrUpdateConsumer(ctx, "MIRROR", jetstream.ConsumerConfig{Durable: "ALL", AckPolicy: jetstream.AckExplicitPolicy})
	wantRefused(t, "an unfiltered consumer on a mirror of SECRET", err)
	if _, err := admin.CreateOrUpdateConsumer(ctx, "MIRROR", jetstream.ConsumerConfig{Durable: "ADMIN", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Errorf("admin's consumer on the mirror: %v", err)
	}
}

// suspendedOf reads x_bus_suspended of a stream or consumer info.
func suspendedOf(t *testing.T, nc *nats.Conn, subject string) string {
	t.Helper()
	var info struct {
		Suspended *struct {
			Description string `json:"description"`
		} `json:"x_bus_suspended"`
	}
	if err := json.Unmarshal(mustRequest(t, nc, subject, ""), &info); err != nil {
		t.Fatal(err)
	}
	if info.Suspended == nil {
		return ""
	}
	return info.Suspended.Description
}

// A reload that shrinks a user's rights suspends what she set up beyond
// them (source, republish, push consumer), with the reason in info and an
// advisory, and resumes it when they come back; nothing stored is lost.
func TestOwnerReloadSuspendsAndResumes(t *testing.T) {
	t.Parallel()
	carol := func(feed bool) server.User {
		allow := []string{"_INBOX.>", "out.>"}
		if feed {
			allow = append(allow, "feed.>")
		}
		return server.User{Name: "carol", Password: "c", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "$JS.ACK.>", "_INBOX.>", "out.>", "feed.>"}},
			Subscribe: &server.SubjectPermission{Allow: allow},
		}}
	}
	dir := t.TempDir()
	opts := func(feed bool) server.Options {
		return server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, carol(feed)}}}
	}
	o := opts(true)
	s := startBus(t, o)
	admin, carolJS := jsAs(t, s, "admin", "a"), jsAs(t, s, "carol", "c")
	ctx := ctxT(t)
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "FEED", Subjects: []string{"feed.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := carolJS.CreateStream(ctx, jetstream.StreamConfig{Name: "COPY", Sources: []*jetstream.StreamSource{{Name: "FEED"}},
		RePublish: &jetstream.RePublish{Source: ">", Destination: "out.>"}}); err != nil {
		t.Fatalf("carol's copy of FEED: %v", err)
	}
	if _, err := carolJS.CreateOrUpdateConsumer(ctx, "FEED", jetstream.ConsumerConfig{Durable: "PUSH", DeliverSubject: "out.push", AckPolicy: jetstream.AckNonePolicy}); err != nil {
		t.Fatalf("carol's push consumer: %v", err)
	}
	adminNC := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	out, _ := adminNC.SubscribeSync("out.>")
	advisories, _ := adminNC.SubscribeSync("$JS.EVENT.ADVISORY.*.*.>")
	_ = adminNC.Flush()
	copyStream, err := admin.Stream(ctx, "COPY")
	if err != nil {
		t.Fatal(err)
	}
	msgs := func() uint64 {
		info, err := copyStream.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	if _, err := admin.Publish(ctx, "feed.1", []byte("1")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return msgs() == 1 })

	if err := s.Reload(opts(false)); err != nil {
		t.Fatal(err)
	}
	if why := suspendedOf(t, adminNC, "$JS.API.STREAM.INFO.COPY"); !strings.Contains(why, "carol") {
		t.Errorf("COPY's x_bus_suspended after the reload: %q", why)
	}
	if why := suspendedOf(t, adminNC, "$JS.API.CONSUMER.INFO.FEED.PUSH"); !strings.Contains(why, "carol") {
		t.Errorf("PUSH's x_bus_suspended after the reload: %q", why)
	}
	for _, want := range []string{"$JS.EVENT.ADVISORY.STREAM.SUSPENDED.COPY", "$JS.EVENT.ADVISORY.CONSUMER.SUSPENDED.FEED.PUSH"} {
		if !sawSubject(advisories, want) {
			t.Errorf("no advisory on %s", want)
		}
	}
	_ = drain(out)
	if _, err := admin.Publish(ctx, "feed.2", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if m, err := out.NextMsg(300 * time.Millisecond); err == nil {
		t.Errorf("suspended flows still sent %q on %s", m.Data, m.Subject)
	}
	if n := msgs(); n != 1 {
		t.Errorf("the suspended source copied: %d messages", n)
	}
	if info, err := copyStream.Info(ctx); err != nil || len(info.Sources) != 1 || info.Sources[0].Error == nil || info.Sources[0].Error.ErrorCode != 10403 {
		t.Errorf("the suspended source's info: %+v, %v", info, err)
	}

	if err := s.Reload(opts(true)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return msgs() == 2 }) // resumed where it stopped
	if why := suspendedOf(t, adminNC, "$JS.API.STREAM.INFO.COPY"); why != "" {
		t.Errorf("COPY still suspended: %q", why)
	}
	if !sawSubject(advisories, "$JS.EVENT.ADVISORY.STREAM.RESUMED.COPY") {
		t.Error("no resumed advisory")
	}
	if _, err := admin.Publish(ctx, "feed.3", []byte("3")); err != nil {
		t.Fatal(err)
	}
	if !sawSubject(out, "out.feed.3") {
		t.Error("the resumed republish sent nothing")
	}
}

// sawSubject waits up to 2s for a message on subject.
func sawSubject(sub *nats.Subscription, subject string) bool {
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return false
		}
		if m.Subject == subject {
			return true
		}
	}
	return false
}

// The owner is stored with the stream and its consumers: after a restart
// with the owner's rights shrunk, what she set up starts suspended, and a
// client cannot name another owner (x_bus_owner is an unknown field).
func TestOwnerSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dave := func(feed bool) server.User {
		allow := []string{"_INBOX.>"}
		if feed {
			allow = append(allow, "feed.>")
		}
		return server.User{Name: "dave", Password: "d", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "_INBOX.>"}},
			Subscribe: &server.SubjectPermission{Allow: allow},
		}}
	}
	opts := func(feed bool) server.Options {
		return server.Options{StoreDir: dir, JetStream: true, Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, dave(feed)}}}
	}
	o := opts(true)
	o.Host = "127.0.0.1"
	first, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	admin, daveJS := jsAs(t, first, "admin", "a"), jsAs(t, first, "dave", "d")
	ctx := ctxT(t)
	if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "FEED", Subjects: []string{"feed.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := daveJS.CreateStream(ctx, jetstream.StreamConfig{Name: "COPY", Sources: []*jetstream.StreamSource{{Name: "FEED"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := daveJS.CreateOrUpdateConsumer(ctx, "FEED", jetstream.ConsumerConfig{Durable: "D", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	resp := mustRequest(t, admin.Conn(), "$JS.API.STREAM.CREATE.FORGED", `{"name":"FORGED","subjects":["forged"],"x_bus_owner":"dave"}`)
	if !strings.Contains(string(resp), "unknown field") {
		t.Errorf("a request naming an owner: %s", resp)
	}
	shutdown(t, first)

	s := startBus(t, opts(false))
	nc := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	if why := suspendedOf(t, nc, "$JS.API.STREAM.INFO.COPY"); !strings.Contains(why, `"dave"`) {
		t.Errorf("COPY after a restart without dave's rights: x_bus_suspended %q", why)
	}
	if why := suspendedOf(t, nc, "$JS.API.CONSUMER.INFO.FEED.D"); !strings.Contains(why, `"dave"`) {
		t.Errorf("consumer D after a restart without dave's rights: x_bus_suspended %q", why)
	}
}

// With reference_stored_reads the reading checks are off, as in the
// reference, but the server still publishes only where the owner may.
func TestOwnerReferenceStoredReadsKeepsPublishChecks(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{
		Users: []server.User{{Name: "admin", Password: "a"}, eveUser()}, ReferenceStoredReads: true,
	}})
	eve := jsAs(t, s, "eve", "e")
	ctx := ctxT(t)
	if _, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "T1", Subjects: []string{"secret.t1.>"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "secret.t1.>", Destination: "pub.t1.>"}}); err != nil {
		t.Errorf("a transform under reference_stored_reads: %v", err)
	}
	_, err := eve.CreateStream(ctx, jetstream.StreamConfig{Name: "R2", Subjects: []string{"pub.c.>"},
		RePublish: &jetstream.RePublish{Source: ">", Destination: "cmd.>"}})
	wantRefused(t, "republishing to cmd.> under reference_stored_reads", err)
}
