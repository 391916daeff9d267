package tests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// kvStep is one key-value operation of a scenario and what it printed.
type kvStep struct {
	name string
	run  func(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue) string
}

// kvOutcome prints an operation's result in a form that does not depend on
// the server: revisions, values, operations and typed errors.
func kvOutcome(e jetstream.KeyValueEntry, err error) string {
	if err != nil {
		return "err " + kvErrName(err)
	}
	return fmt.Sprintf("rev=%d key=%s val=%q op=%s", e.Revision(), e.Key(), e.Value(), e.Operation())
}

func kvErrName(err error) string {
	for _, known := range []error{
		jetstream.ErrKeyNotFound, jetstream.ErrKeyExists, jetstream.ErrKeyDeleted,
		jetstream.ErrNoKeysFound, jetstream.ErrBucketNotFound, jetstream.ErrBucketExists,
		jetstream.ErrInvalidKey, jetstream.ErrHistoryTooLarge, jetstream.ErrKeyValueConfigRequired,
		jetstream.ErrInvalidBucketName, jetstream.ErrBadRequest,
	} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return fmt.Sprintf("api %d %d %s", apiErr.Code, apiErr.ErrorCode, apiErr.Description)
	}
	return err.Error()
}

func kvRev(rev uint64, err error) string {
	if err != nil {
		return "err " + kvErrName(err)
	}
	return fmt.Sprintf("rev=%d", rev)
}

// kvScenario is what a user does with a bucket through nats.go: puts,
// compare-and-set, history, deletes and purges, keys and watches.
var kvScenario = []kvStep{
	{"put a", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Put(ctx, "a", []byte("1")))
	}},
	{"put a again", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.PutString(ctx, "a", "2"))
	}},
	{"get a", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvOutcome(kv.Get(ctx, "a"))
	}},
	{"get a revision 1", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvOutcome(kv.GetRevision(ctx, "a", 1))
	}},
	{"get missing", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvOutcome(kv.Get(ctx, "missing"))
	}},
	{"create existing", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Create(ctx, "a", []byte("x")))
	}},
	{"create b", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Create(ctx, "b.c", []byte("bc")))
	}},
	{"update wrong revision", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Update(ctx, "a", []byte("3"), 1))
	}},
	{"update right revision", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Update(ctx, "a", []byte("3"), 2))
	}},
	{"invalid key", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Put(ctx, "bad key", []byte("x")))
	}},
	{"history a", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		entries, err := kv.History(ctx, "a")
		if err != nil {
			return "err " + kvErrName(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, kvOutcome(e, nil))
		}
		return strings.Join(out, " | ")
	}},
	{"keys", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		keys, err := kv.Keys(ctx)
		if err != nil {
			return "err " + kvErrName(err)
		}
		slices.Sort(keys)
		return strings.Join(keys, ",")
	}},
	{"delete a", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		if err := kv.Delete(ctx, "a"); err != nil {
			return "err " + kvErrName(err)
		}
		return "ok"
	}},
	{"get deleted", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvOutcome(kv.Get(ctx, "a"))
	}},
	{"create after delete", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvRev(kv.Create(ctx, "a", []byte("again")))
	}},
	{"delete with wrong last revision", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		if err := kv.Delete(ctx, "a", jetstream.LastRevision(1)); err != nil {
			return "err " + kvErrName(err)
		}
		return "ok"
	}},
	{"purge a", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		if err := kv.Purge(ctx, "a"); err != nil {
			return "err " + kvErrName(err)
		}
		return "ok"
	}},
	{"history after purge", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		entries, err := kv.History(ctx, "a")
		if err != nil {
			return "err " + kvErrName(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, fmt.Sprintf("op=%s val=%q", e.Operation(), e.Value()))
		}
		return strings.Join(out, " | ")
	}},
	{"keys after purge", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		keys, err := kv.Keys(ctx)
		if err != nil {
			return "err " + kvErrName(err)
		}
		slices.Sort(keys)
		return strings.Join(keys, ",")
	}},
	{"history depth", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		for i := range 7 {
			if _, err := kv.PutString(ctx, "d", fmt.Sprint(i)); err != nil {
				return "err " + kvErrName(err)
			}
		}
		entries, err := kv.History(ctx, "d")
		if err != nil {
			return "err " + kvErrName(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, string(e.Value()))
		}
		return strings.Join(out, ",")
	}},
	{"watch all", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvWatch(ctx, kv, ">")
	}},
	{"watch include history", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvWatch(ctx, kv, "d", jetstream.IncludeHistory())
	}},
	{"watch ignore deletes", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		return kvWatch(ctx, kv, ">", jetstream.IgnoreDeletes())
	}},
	{"watch updates only", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
		if err != nil {
			return "err " + kvErrName(err)
		}
		defer w.Stop()
		if _, err := kv.PutString(ctx, "u", "new"); err != nil {
			return "err " + kvErrName(err)
		}
		select {
		case e := <-w.Updates():
			if e == nil {
				return "nil first"
			}
			return "update " + e.Key() + "=" + string(e.Value())
		case <-ctx.Done():
			return "timeout"
		}
	}},
	{"status", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		st, err := kv.Status(ctx)
		if err != nil {
			return "err " + kvErrName(err)
		}
		return fmt.Sprintf("bucket=%s values=%d history=%d ttl=%s backing=%s",
			st.Bucket(), st.Values(), st.History(), st.TTL(), st.BackingStore())
	}},
	{"list buckets", func(ctx context.Context, js jetstream.JetStream, _ jetstream.KeyValue) string {
		var names []string
		l := js.KeyValueStoreNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		if err := l.Error(); err != nil {
			return "err " + kvErrName(err)
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}},
	{"purge deletes", func(ctx context.Context, _ jetstream.JetStream, kv jetstream.KeyValue) string {
		if err := kv.PurgeDeletes(ctx, jetstream.DeleteMarkersOlderThan(-1)); err != nil {
			return "err " + kvErrName(err)
		}
		keys, err := kv.ListKeys(ctx)
		if err != nil {
			return "err " + kvErrName(err)
		}
		var out []string
		for k := range keys.Keys() {
			out = append(out, k)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}},
	{"delete bucket", func(ctx context.Context, js jetstream.JetStream, _ jetstream.KeyValue) string {
		if err := js.DeleteKeyValue(ctx, "cfg"); err != nil {
			return "err " + kvErrName(err)
		}
		_, err := js.KeyValue(ctx, "cfg")
		return "after: err " + kvErrName(err)
	}},
}

func kvWatch(ctx context.Context, kv jetstream.KeyValue, keys string, opts ...jetstream.WatchOpt) string {
	w, err := kv.Watch(ctx, keys, opts...)
	if err != nil {
		return "err " + kvErrName(err)
	}
	defer w.Stop()
	var out []string
	for {
		select {
		case e := <-w.Updates():
			if e == nil {
				return strings.Join(out, " | ")
			}
			out = append(out, fmt.Sprintf("%s=%q/%s/%d", e.Key(), e.Value(), e.Operation(), e.Revision()))
		case <-ctx.Done():
			return "timeout after " + strings.Join(out, " | ")
		}
	}
}

func runKVScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 20*time.Second)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "cfg", History: 5})
	if err != nil {
		t.Fatalf("create bucket on %s: %v", url, err)
	}
	var out []string
	for _, step := range kvScenario {
		stepCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		out = append(out, step.name+": "+step.run(stepCtx, js, kv))
		cancel()
	}
	return out
}

// TestKeyValueMatchesReference runs one bucket's life through nats.go's
// KeyValue on bus and on the reference and compares every outcome.
func TestKeyValueMatchesReference(t *testing.T) {
	ref := runKVScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := runKVScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// kvMirrorScenario: a bucket mirrored and one sourced from it, read
// through nats.go as a user would.
func kvMirrorScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	src, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "origin", History: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"a", "1"}, {"b", "2"}, {"a", "3"}} {
		if _, err := src.PutString(ctx, kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	mirror, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "replica", Mirror: &jetstream.StreamSource{Name: "origin"}})
	if err != nil {
		t.Fatal(err)
	}
	agg, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "agg", Sources: []*jetstream.StreamSource{{Name: "origin"}}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range []jetstream.KeyValue{mirror, agg} {
		waitFor(10*time.Second, func() bool {
			st, err := b.Status(ctx)
			return err == nil && st.Values() == 2 // history 1: a and b (its delete marker)
		})
		e, err := b.Get(ctx, "a")
		out = append(out, fmt.Sprintf("%s get a: %s", b.Bucket(), kvOutcome(e, err)))
		_, err = b.Get(ctx, "b")
		out = append(out, fmt.Sprintf("%s get b: %v", b.Bucket(), kvErrName(err)))
		keys, err := b.Keys(ctx)
		slices.Sort(keys)
		out = append(out, fmt.Sprintf("%s keys: %v %v", b.Bucket(), keys, err))
	}
	return out
}

func TestKeyValueMirrorsMatchReference(t *testing.T) {
	t.Parallel()
	ref := kvMirrorScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := kvMirrorScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
