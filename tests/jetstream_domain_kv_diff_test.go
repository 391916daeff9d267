package tests

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// domainInfoScenario is nats.go's TestNewWithDomain and a little more:
// through a domain handle, account info and the stream infos name the
// domain (the reference leaves it out of a create's answer only).
// Issue 28, item 6.
func domainInfoScenario(t *testing.T, url, domain string) []string {
	t.Helper()
	js, err := jetstream.NewWithDomain(connect(t, url), domain)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	ai, err := js.AccountInfo(ctx)
	out = append(out, fmt.Sprintf("account info domain=%q err=%v", ai.Domain, err))
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "TEST", Subjects: []string{"foo"}})
	must(t, err)
	out = append(out, fmt.Sprintf("create domain=%q", st.CachedInfo().Domain))
	_, err = js.Publish(ctx, "foo", []byte("msg"))
	must(t, err)
	info, err := st.Info(ctx)
	must(t, err)
	out = append(out, fmt.Sprintf("info domain=%q msgs=%d", info.Domain, info.State.Msgs))
	up, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "TEST", Subjects: []string{"foo"}, MaxMsgs: 10})
	must(t, err)
	out = append(out, fmt.Sprintf("update domain=%q", up.CachedInfo().Domain))
	for s := range js.ListStreams(ctx).Info() {
		out = append(out, fmt.Sprintf("list %s domain=%q", s.Config.Name, s.Domain))
	}
	return out
}

func TestJetStreamDomainInfoMatchesReference(t *testing.T) {
	t.Parallel()
	want := domainInfoScenario(t, startReferenceDomain(t, "ABC").ClientURL(), "ABC")
	got := domainInfoScenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "ABC"})), "ABC")
	sameOutcomes(t, want, got)
}

// domainKVScenario runs a key-value bucket and an object store through a
// domain handle, as `nats --js-domain` does: a KV put goes to
// $JS.<domain>.API.$KV.<bucket>.<key>, which the domain's server takes
// as a publish on $KV.<bucket>.<key> (the reference's domain mapping
// table).
func domainKVScenario(t *testing.T, url, domain string) []string {
	js, err := jetstream.NewWithDomain(connect(t, url), domain)
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	var kv jetstream.KeyValue
	// Across a leaf link the first requests may beat the link's interest.
	eventually(t, 10*time.Second, func() bool {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "B", History: 3})
		return err == nil
	})
	rev, err := kv.Put(ctx, "k", []byte("v1"))
	out = append(out, fmt.Sprintf("put: rev=%d err=%v", rev, err))
	rev, err = kv.Update(ctx, "k", []byte("v2"), rev)
	out = append(out, fmt.Sprintf("update: rev=%d err=%v", rev, err))
	_, err = kv.Update(ctx, "k", []byte("v3"), 1)
	var apiErr *jetstream.APIError
	out = append(out, fmt.Sprintf("stale update refused: %v", errors.As(err, &apiErr) && apiErr.ErrorCode == 10071))
	rev, err = kv.Create(ctx, "other", []byte("o"))
	out = append(out, fmt.Sprintf("create: rev=%d err=%v", rev, err))
	e, err := kv.Get(ctx, "k")
	if err != nil {
		out = append(out, fmt.Sprintf("get: %v", err))
	} else {
		out = append(out, fmt.Sprintf("get: %s rev=%d", e.Value(), e.Revision()))
	}
	must(t, kv.Delete(ctx, "other"))
	keys, err := kv.Keys(ctx)
	out = append(out, fmt.Sprintf("keys: %v %v", keys, err))
	hist, err := kv.History(ctx, "k")
	out = append(out, fmt.Sprintf("history: %d %v", len(hist), err))
	st, err := kv.Status(ctx)
	must(t, err)
	out = append(out, fmt.Sprintf("status: values=%d", st.Values()))

	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "OB"})
	must(t, err)
	oi, err := obs.PutBytes(ctx, "file", make([]byte, 300<<10))
	if err != nil {
		out = append(out, fmt.Sprintf("object put: %v", err))
	} else {
		out = append(out, fmt.Sprintf("object put: size=%d chunks=%d", oi.Size, oi.Chunks))
	}
	b, err := obs.GetBytes(ctx, "file")
	out = append(out, fmt.Sprintf("object get: %d %v", len(b), err))
	return out
}

func TestJetStreamDomainKVMatchesReference(t *testing.T) {
	t.Parallel()
	want := domainKVScenario(t, startReferenceDomain(t, "hub").ClientURL(), "hub")
	got := domainKVScenario(t, busURL(startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})), "hub")
	sameOutcomes(t, want, got)
}

// A key put through the domain is a publish on $KV.<bucket>.<key> too: a
// user denied that subject does not get around the deny by publishing on
// $JS.<domain>.API.$KV.> instead (bus is stricter than the reference
// here, docs/api.md).
func TestJetStreamDomainKVHonoursPublishDeny(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub", Authorization: server.Authorization{Users: []server.User{
		{Name: "admin", Password: "a"},
		{Name: "apionly", Password: "o", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.hub.API.>"}, Deny: []string{"$KV.>"}},
			Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>"}},
		}},
	}}})
	ctx := ctxT(t)
	admin := jsAs(t, s, "admin", "a")
	kv, err := admin.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "B"})
	must(t, err)
	js, err := jetstream.NewWithDomain(connect(t, busURL(s), nats.UserInfo("apionly", "o")), "hub")
	must(t, err)
	theirs, err := js.KeyValue(ctx, "B")
	must(t, err)
	_, err = theirs.Put(ctx, "k", []byte("v"))
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 403 {
		t.Fatalf("put through the domain by a user denied $KV.>: %v", err)
	}
	if _, err := kv.Get(ctx, "k"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the denied put was stored: %v", err)
	}
	// The admin's put through the domain is stored.
	mine, err := jetstream.NewWithDomain(connect(t, busURL(s), nats.UserInfo("admin", "a")), "hub")
	must(t, err)
	kvm, err := mine.KeyValue(ctx, "B")
	must(t, err)
	_, err = kvm.Put(ctx, "k", []byte("v"))
	must(t, err)
	if e, err := kv.Get(ctx, "k"); err != nil || string(e.Value()) != "v" {
		t.Fatalf("get after the admin's put: %v %v", e, err)
	}
}

// A client of a hub uses a leaf's buckets through the leaf's domain, as
// `nats --js-domain leaf kv put|get|history|ls` on the hub does: the
// watches behind history and keys are push consumers whose deliveries
// cross the link to the hub client's inbox showing $KV subjects.
func TestLeafHubClientKVThroughDomainMatchesReference(t *testing.T) {
	t.Parallel()
	// One hub node, not clustered: what is looked at is the leaf.
	single := func(o *natsserver.Options) { o.Cluster, o.Routes = natsserver.ClusterOpts{}, nil }
	refHub := startHubCluster(t, 1, true, single)
	startReferenceLeafJS(t, refHub, "leaf")
	want := domainKVScenario(t, refHub.clientURL(0), "leaf")
	hub := startHubCluster(t, 1, true, single)
	startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "leaf"}, server.LeafRemote{URLs: hub.leafURLs()})
	got := domainKVScenario(t, hub.clientURL(0), "leaf")
	sameOutcomes(t, want, got)
}

// The leaf's deny_exports still hold for a JetStream delivery to a hub
// client: a stored message on a denied subject does not cross to the
// hub client's inbox, while an allowed one does.
func TestLeafDeliveryHonoursDenyExports(t *testing.T) {
	t.Parallel()
	single := func(o *natsserver.Options) { o.Cluster, o.Routes = natsserver.ClusterOpts{}, nil }
	hub := startHubCluster(t, 1, true, single)
	s := startBusLeaf(t, hub, server.Options{JetStream: true, JetStreamDomain: "leaf"}, server.LeafRemote{URLs: hub.leafURLs(), DenyExports: []string{"secret.>"}})
	local, err := jetstream.New(connect(t, busURL(s)))
	must(t, err)
	ctx := ctxT(t)
	_, err = local.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"secret.>", "open.>"}})
	must(t, err)
	for _, subj := range []string{"secret.1", "open.1"} {
		_, err := local.Publish(ctx, subj, []byte("x"))
		must(t, err)
	}
	js, err := jetstream.NewWithDomain(connect(t, hub.clientURL(0)), "leaf")
	must(t, err)
	var got []string
	for _, filter := range []string{"secret.>", "open.>"} {
		var c jetstream.Consumer
		eventually(t, 10*time.Second, func() bool {
			c, err = js.CreateConsumer(ctx, "S", jetstream.ConsumerConfig{FilterSubject: filter, AckPolicy: jetstream.AckNonePolicy})
			return err == nil
		})
		b, err := c.Fetch(1, jetstream.FetchMaxWait(time.Second))
		must(t, err)
		for m := range b.Messages() {
			got = append(got, m.Subject())
		}
	}
	if fmt.Sprint(got) != "[open.1]" {
		t.Fatalf("the hub client got %v, want only [open.1]", got)
	}
}
