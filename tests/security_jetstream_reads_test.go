package tests

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// readsFixture is a stream holding secret.a and pub.b, an admin, and eve,
// who may subscribe to anything but secret.>.
type readsFixture struct {
	admin, eve jetstream.JetStream
}

func startReadsFixture(t *testing.T, reference bool) readsFixture {
	t.Helper()
	f, _ := startReadsFixtureWith(t, server.Options{Authorization: server.Authorization{ReferenceStoredReads: reference}})
	return f
}

// startReadsFixtureWith starts the fixture on opts (JetStream and the
// users added) and returns the server too.
func startReadsFixtureWith(t *testing.T, opts server.Options) (readsFixture, *server.Server) {
	t.Helper()
	eve := server.User{Name: "eve", Password: "e", Permissions: &server.Permissions{
		Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}},
	}}
	opts.JetStream, opts.Authorization.Users = true, []server.User{{Name: "admin", Password: "a"}, eve}
	s := startBus(t, opts)
	f := readsFixture{admin: jsAs(t, s, "admin", "a"), eve: jsAs(t, s, "eve", "e")}
	ctx := ctxT(t)
	if _, err := f.admin.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"secret.>", "pub.>"}}); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{"secret.a", "pub.b"} {
		if _, err := f.admin.Publish(ctx, subj, []byte(subj)); err != nil {
			t.Fatal(err)
		}
	}
	for name, filter := range map[string]string{"SECRET": "secret.>", "ALL": "", "PUB": "pub.>"} {
		if _, err := f.admin.CreateOrUpdateConsumer(ctx, "S", jetstream.ConsumerConfig{
			Durable: name, FilterSubject: filter, AckPolicy: jetstream.AckExplicitPolicy,
			AckWait: time.Second, MaxDeliver: 2,
		}); err != nil {
			t.Fatal(err)
		}
	}
	return f, s
}

// A pull its puller could never be delivered (it may not subscribe to
// the consumer's subjects: its filter, or the stream's subjects when it
// has none) is refused at once with a 409 naming the subject, and
// nothing counts as delivered, so nothing is redelivered or dead-lettered
// because of a permission setting. Under reference_stored_reads the pull
// is served, as by the reference.
func TestJetStreamPullRefusedWithoutSubscribeRights(t *testing.T) {
	t.Parallel()
	for _, reference := range []bool{false, true} {
		t.Run(map[bool]string{false: "bus", true: "reference rule"}[reference], func(t *testing.T) {
			t.Parallel()
			f := startReadsFixture(t, reference)
			ctx := ctxT(t)
			for _, name := range []string{"SECRET", "ALL"} {
				c, err := f.eve.Consumer(ctx, "S", name)
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				batch, err := c.Fetch(1, jetstream.FetchMaxWait(3*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for m := range batch.Messages() {
					got = append(got, m.Subject())
				}
				info, err := f.admin.Consumer(ctx, "S", name)
				if err != nil {
					t.Fatal(err)
				}
				ci := info.CachedInfo()
				if reference {
					if batch.Error() != nil || len(got) != 1 || got[0] != "secret.a" {
						t.Errorf("%s under the reference rule: got %v, %v; want secret.a", name, got, batch.Error())
					}
					continue
				}
				if err := batch.Error(); err == nil || !strings.Contains(err.Error(), `"secret.>"`) || len(got) != 0 {
					t.Errorf("%s: got %v, error %v; want a refusal naming \"secret.>\"", name, got, err)
				}
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("%s: refused after %v, want at once", name, d)
				}
				if ci.NumAckPending != 0 || ci.NumRedelivered != 0 || ci.Delivered.Consumer != 0 {
					t.Errorf("%s: ack pending %d, redelivered %d, delivered %d; want nothing delivered",
						name, ci.NumAckPending, ci.NumRedelivered, ci.Delivered.Consumer)
				}
			}
			// A consumer inside eve's rights serves her.
			c, err := f.eve.Consumer(ctx, "S", "PUB")
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.Next(jetstream.FetchMaxWait(3 * time.Second))
			if err != nil || m.Subject() != "pub.b" {
				t.Fatalf("pull inside the rights: %v", err)
			}
		})
	}
}

// An ack with +NXT is a pull too: it is refused the same way.
func TestJetStreamAckNextRefusedWithoutSubscribeRights(t *testing.T) {
	t.Parallel()
	f := startReadsFixture(t, false)
	nc := f.eve.Conn()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("$JS.ACK.S.SECRET.1.1.1.0.0", inbox, []byte("+NXT")); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(3 * time.Second)
	if err != nil {
		t.Fatalf("no answer to +NXT: %v", err)
	}
	if m.Header.Get("Status") != "409" || !strings.Contains(m.Header.Get("Description"), `"secret.>"`) {
		t.Fatalf("answer %q %q, want a 409 naming \"secret.>\"", m.Header.Get("Status"), m.Header.Get("Description"))
	}
	c, err := f.admin.Consumer(ctxT(t), "S", "SECRET")
	if err != nil {
		t.Fatal(err)
	}
	if ci := c.CachedInfo(); ci.NumAckPending != 0 || ci.Delivered.Consumer != 0 {
		t.Fatalf("ack pending %d, delivered %d; want nothing delivered", ci.NumAckPending, ci.Delivered.Consumer)
	}
}

// STREAM.INFO's per-subject counts list only the subjects the requester
// may read; under reference_stored_reads, all of them.
func TestJetStreamStreamInfoSubjectsNeedSubscribeRights(t *testing.T) {
	t.Parallel()
	for _, reference := range []bool{false, true} {
		t.Run(map[bool]string{false: "bus", true: "reference rule"}[reference], func(t *testing.T) {
			t.Parallel()
			f := startReadsFixture(t, reference)
			ctx := ctxT(t)
			st, err := f.eve.Stream(ctx, "S")
			if err != nil {
				t.Fatal(err)
			}
			info, err := st.Info(ctx, jetstream.WithSubjectFilter(">"))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]uint64{"pub.b": 1}
			if reference {
				want["secret.a"] = 1
			}
			if !maps.Equal(info.State.Subjects, want) {
				t.Fatalf("subjects %v, want %v", info.State.Subjects, want)
			}
			// The admin sees every subject.
			ast, err := f.admin.Stream(ctx, "S")
			if err != nil {
				t.Fatal(err)
			}
			ainfo, err := ast.Info(ctx, jetstream.WithSubjectFilter(">"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ainfo.State.Subjects) != 2 {
				t.Fatalf("admin subjects %v, want both", ainfo.State.Subjects)
			}
		})
	}
}

// An unfiltered consumer on a mirror (a stream with no subjects of its
// own, holding whatever its origin holds) reads what the origin holds:
// eve may neither create nor pull one.
func TestJetStreamMirrorConsumerNeedsRightsToEverySubject(t *testing.T) {
	t.Parallel()
	f := startReadsFixture(t, false)
	ctx := ctxT(t)
	if _, err := f.admin.CreateStream(ctx, jetstream.StreamConfig{Name: "M", Mirror: &jetstream.StreamSource{Name: "S"}}); err != nil {
		t.Fatal(err)
	}
	var apiErr *jetstream.APIError
	if _, err := f.eve.CreateOrUpdateConsumer(ctx, "M", jetstream.ConsumerConfig{Durable: "EVE", AckPolicy: jetstream.AckExplicitPolicy}); !errors.As(err, &apiErr) || apiErr.ErrorCode != 10403 {
		t.Fatalf("eve's unfiltered consumer on a mirror: %v, want err_code 10403", err)
	}
	if _, err := f.admin.CreateOrUpdateConsumer(ctx, "M", jetstream.ConsumerConfig{Durable: "ALL", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	c, err := f.eve.Consumer(ctx, "M", "ALL")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(jetstream.FetchMaxWait(3 * time.Second)); err == nil || !strings.Contains(err.Error(), `may not read "secret.>"`) {
		t.Fatalf("eve's pull of an unfiltered consumer on a mirror: %v, want a refusal naming \"secret.>\"", err)
	}
}

// A pull through the JetStream domain's API prefix is checked as well.
func TestJetStreamDomainPullRefusedWithoutSubscribeRights(t *testing.T) {
	t.Parallel()
	_, s := startReadsFixtureWith(t, server.Options{JetStreamDomain: "hub"})
	eve, err := jetstream.NewWithDomain(connect(t, busURL(s), nats.UserInfo("eve", "e")), "hub")
	if err != nil {
		t.Fatal(err)
	}
	c, err := eve.Consumer(ctxT(t), "S", "SECRET")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(jetstream.FetchMaxWait(3 * time.Second)); err == nil || !strings.Contains(err.Error(), `may not read "secret.>"`) {
		t.Fatalf("eve's pull through the domain: %v, want a refusal naming \"secret.>\"", err)
	}
}
