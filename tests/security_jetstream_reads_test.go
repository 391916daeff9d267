package tests

import (
	"maps"
	"testing"
	"time"

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
	eve := server.User{Name: "eve", Password: "e", Permissions: &server.Permissions{
		Subscribe: &server.SubjectPermission{Deny: []string{"secret.>"}},
	}}
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{
		Users: []server.User{{Name: "admin", Password: "a"}, eve}, ReferenceStoredReads: reference,
	}})
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
	return f
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
