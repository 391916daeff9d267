package jetstream

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/jetlog/vfs"
	"github.com/bus-dev/bus/snapshot"
)

// A restored stream is built without a sync until it is finished
// (restoresync.go); once buildStream returns, a power cut must find the
// whole stream and its consumer, since the next step publishes it.
// Checked on the strict-POSIX MemFS, where only synced bytes and synced
// directory entries survive, with random torn tails.
func TestRestoredStreamIsDurableOnceBuilt(t *testing.T) {
	cfg := streamConfig{Name: "S", Subjects: []string{"s.>"}}
	if e := cfg.normalize(); e != nil {
		t.Fatal(e)
	}
	const msgs = 300 // past restoreBatch, with gaps
	sp := writeTestSnapshot(t, cfg, msgs)
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/store/.restore/S.x", 0o755); err != nil {
		t.Fatal(err)
	}
	// The staging directory itself is made durable by the store's own
	// sync after the rename; here it is durable from the start.
	for _, d := range []string{"/", "/store", "/store/.restore"} {
		if err := mem.SyncDir(d); err != nil {
			t.Fatal(err)
		}
	}
	sh := &shared{fs: mem}
	dir := "/store/.restore/S.x/S"
	if err := buildStream(sh, cfg, sp, dir); err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(20) {
		crashed := mem.CrashClone(rand.New(rand.NewPCG(seed, 1)))
		l, err := jetlog.Open(dir, cfg.logConfig(), jetlog.Options{FS: crashed})
		if err != nil {
			t.Fatalf("seed %d: reopen after a power cut: %v", seed, err)
		}
		st := l.State()
		names, cerr := l.ConsumerNames()
		_ = l.Close()
		if st.Msgs != msgs || st.LastSeq != 2*msgs {
			t.Fatalf("seed %d: after a power cut %d messages, last seq %d; want %d, %d", seed, st.Msgs, st.LastSeq, msgs, 2*msgs)
		}
		if cerr != nil || len(names) != 1 || names[0] != "C" {
			t.Fatalf("seed %d: consumers %v %v, want [C]", seed, names, cerr)
		}
	}
}

// The build syncs nothing until it is done: without the final pass a
// power cut loses the stream, which is what makes the test above mean
// something.
func TestRestoreBuildDefersItsSyncs(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := mem.MkdirAll("/store/b", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mem.SyncDir("/store"); err != nil {
		t.Fatal(err)
	}
	sh := &shared{fs: mem}
	cfg := streamConfig{Name: "S", Subjects: []string{"s.>"}}
	if e := cfg.normalize(); e != nil {
		t.Fatal(e)
	}
	l, err := jetlog.Open("/store/b/S", cfg.logConfig(), sh.buildOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(jetlog.Msg{Subject: "s.a", Data: []byte("x")}, jetlog.Expect{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if names, err := mem.CrashClone(nil).ReadDir("/store/b"); err == nil && len(names) > 0 {
		t.Fatalf("the build made %v durable before its sync pass", names)
	}
}

// writeTestSnapshot spools a snapshot of cfg with n messages at seqs 2,
// 4, … 2n and one durable consumer.
func writeTestSnapshot(t *testing.T, cfg streamConfig, n int) spool {
	t.Helper()
	sp, err := newSpool(nil, filepath.Join(t.TempDir(), "snapshot"), false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sp.create()
	if err != nil {
		t.Fatal(err)
	}
	w, err := snapshot.NewWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(cfg)
	now := time.Now()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.JSON(snapshot.KindHeader, snapshot.Header{Version: snapshot.Version, Config: raw, Created: now, FirstSeq: 2, LastSeq: uint64(2 * n), Time: now}))
	for i := 1; i <= n; i++ {
		must(w.Msg(snapshot.Msg{Seq: uint64(2 * i), Time: now.UnixNano(), Subject: fmt.Sprintf("s.%d", i%7), Data: []byte("payload")}))
	}
	must(w.JSON(snapshot.KindConsumer, snapshot.Consumer{Name: "C", Created: now,
		Config:    json.RawMessage(`{"durable_name":"C","ack_policy":"explicit","deliver_policy":"all"}`),
		Delivered: snapshot.SeqPair{Consumer: 3, Stream: 6}, AckFloor: snapshot.SeqPair{Consumer: 1, Stream: 2}}))
	must(w.JSON(snapshot.KindEnd, snapshot.End{Messages: uint64(n), Consumers: 1}))
	must(w.Close())
	must(f.Close())
	return sp
}
