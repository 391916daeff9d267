package jetstream

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// batchService is a service on a fake core with one allow_atomic stream
// B capturing b.>, and limits as given.
func batchService(t *testing.T, lim BatchLimits) (*Service, *fakeCore) {
	t.Helper()
	return batchServiceWith(t, lim, `{"name":"B","subjects":["b.>"],"allow_atomic":true}`)
}

// batchServiceWith is batchService with stream B's config as given.
func batchServiceWith(t testing.TB, lim BatchLimits, config string) (*Service, *fakeCore) {
	t.Helper()
	core := newFakeCore()
	svc, err := New(core, Options{Dir: t.TempDir(), Batch: lim})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Shutdown)
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.B", reply: "_INBOX.mk",
		body: []byte(config)})
	if svc.stream("B") == nil {
		t.Fatal("stream B not created")
	}
	return svc, core
}

// publishBatch publishes one batch message through the fake core.
func publishBatch(core *fakeCore, id, seq, reply string) {
	publishBatchData(core, id, seq, reply, []byte("x"))
}

// publishBatchData publishes one batch message with payload data, and
// Nats-Batch-Commit: 1 if seq ends in "!".
func publishBatchData(core *fakeCore, id, seq, reply string, data []byte) {
	commit := ""
	if s, ok := strings.CutSuffix(seq, "!"); ok {
		seq, commit = s, "Nats-Batch-Commit: 1\r\n"
	}
	hdr := []byte("NATS/1.0\r\nNats-Batch-Id: " + id + "\r\nNats-Batch-Sequence: " + seq + "\r\n" + commit + "\r\n")
	core.Deliver("b.x", "b.x", reply, hdr, data)
}

// sentTo returns what the core kept for subjects starting with prefix.
func sentTo(core *fakeCore, prefix string) [][]byte {
	core.mu.Lock()
	defer core.mu.Unlock()
	var out [][]byte
	for _, m := range core.sent {
		if strings.HasPrefix(m.to, prefix) {
			out = append(out, m.data)
		}
	}
	return out
}

func TestBatchAbandonedAfterTimeout(t *testing.T) {
	t.Parallel()
	svc, core := batchService(t, BatchLimits{Timeout: 20 * time.Millisecond})
	st := svc.stream("B")
	publishBatch(core, "slow", "1", "_INBOX.r1")
	deadline := time.Now().Add(5 * time.Second)
	for st.openBatches() != 0 || len(sentTo(core, "$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.B")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("batch still open: %d", st.openBatches())
		}
		time.Sleep(time.Millisecond) // polling the timer's effect, not waiting for it
	}
	adv := sentTo(core, "$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.B")[0]
	if !bytes.Contains(adv, []byte(`"batch":"slow","reason":"timeout"`)) {
		t.Fatalf("advisory %s", adv)
	}
	publishBatch(core, "slow", "2", "_INBOX.r2")
	if got := sentTo(core, "_INBOX.r2"); len(got) != 1 || !bytes.Contains(got[0], []byte("10176")) {
		t.Fatalf("after timeout: %q", got)
	}
	if n := svc.sh.inflightBatches.Load(); n != 0 {
		t.Fatalf("inflight %d", n)
	}
}

func TestBatchInflightLimits(t *testing.T) {
	t.Parallel()
	svc, core := batchService(t, BatchLimits{MaxInflightPerStream: 2, MaxInflightTotal: 3})
	publishBatch(core, "a", "1", "_INBOX.a")
	publishBatch(core, "b", "1", "_INBOX.b")
	publishBatch(core, "c", "1", "_INBOX.c")
	if got := sentTo(core, "_INBOX.c"); len(got) != 1 || !bytes.Contains(got[0], []byte("10210")) {
		t.Fatalf("third batch: %q", got)
	}
	if n := svc.stream("B").openBatches(); n != 2 {
		t.Fatalf("open %d", n)
	}
	if n := svc.sh.inflightBatches.Load(); n != 2 {
		t.Fatalf("inflight %d", n)
	}
	// Turning allow_atomic off drops them.
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.UPDATE.B", reply: "_INBOX.upd",
		body: []byte(`{"name":"B","subjects":["b.>"]}`)})
	if n := svc.sh.inflightBatches.Load(); n != 0 {
		t.Fatalf("inflight after disabling %d", n)
	}
}
