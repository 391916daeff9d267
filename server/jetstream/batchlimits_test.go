package jetstream

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"
	"weak"
)

// stagedCounts is what stream st and the service count as staged.
func stagedCounts(svc *Service, st *stream) (stream, all int64) {
	st.batches.mu.Lock()
	defer st.batches.mu.Unlock()
	return st.batches.staged, svc.sh.stagedBytes.Load()
}

// firstStaged is a weak pointer to the payload of batch id's first
// staged message.
func firstStaged(t *testing.T, st *stream, id string) weak.Pointer[byte] {
	t.Helper()
	st.batches.mu.Lock()
	defer st.batches.mu.Unlock()
	b := st.batches.open[id]
	if b == nil || len(b.msgs) == 0 {
		t.Fatalf("batch %q has nothing staged", id)
	}
	return weak.Make(&b.msgs[0].Data[0])
}

// released reports whether the garbage collector freed what w points to.
func released(w weak.Pointer[byte]) bool {
	for range 10 { // Value may stay set until a cycle sweeps it
		runtime.GC()
		if w.Value() == nil {
			return true
		}
	}
	return false
}

// Staged bytes count against the stream's max_bytes; the batch past it
// is refused as too large and abandoned, its bytes given back and its
// messages released, and the next batch is staged and committed.
func TestBatchStagedBytesBoundedByMaxBytes(t *testing.T) {
	t.Parallel()
	svc, core := batchServiceWith(t, BatchLimits{}, `{"name":"B","subjects":["b.>"],"allow_atomic":true,"max_bytes":1000}`)
	st := svc.stream("B")
	data := bytes.Repeat([]byte("d"), 250)
	for seq := 1; seq <= 3; seq++ {
		publishBatchData(core, "a", strconv.Itoa(seq), "_INBOX.a", data)
	}
	one := int64(len("b.x") + len(data) + len("NATS/1.0\r\nNats-Batch-Id: a\r\nNats-Batch-Sequence: 1\r\n\r\n"))
	if s, all := stagedCounts(svc, st); s != 3*one || all != 3*one {
		t.Fatalf("staged %d, in all %d; want %d", s, all, 3*one)
	}
	w := firstStaged(t, st, "a")
	publishBatchData(core, "a", "4", "_INBOX.a4", data)
	if got := sentTo(core, "_INBOX.a4"); len(got) != 1 || !bytes.Contains(got[0], []byte(`"err_code":10199,"description":"atomic publish batch is too large: 1000"`)) {
		t.Fatalf("past max_bytes: %q", got)
	}
	if adv := sentTo(core, "$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.B"); len(adv) != 1 || !bytes.Contains(adv[0], []byte(`"reason":"large"`)) {
		t.Fatalf("advisories %q", adv)
	}
	if s, all := stagedCounts(svc, st); s != 0 || all != 0 || st.openBatches() != 0 {
		t.Fatalf("after the refusal: staged %d, in all %d, open %d", s, all, st.openBatches())
	}
	if !released(w) {
		t.Fatal("the refused batch's messages are still held")
	}
	for _, seq := range []string{"1", "2", "3!"} {
		publishBatchData(core, "b", seq, "_INBOX.b"+seq, data)
	}
	if got := sentTo(core, "_INBOX.b3!"); len(got) != 1 || !bytes.Contains(got[0], []byte(`"count":3`)) {
		t.Fatalf("commit after the refusal: %q", got)
	}
	if s, all := stagedCounts(svc, st); s != 0 || all != 0 {
		t.Fatalf("after the commit: staged %d, in all %d", s, all)
	}
}

// A batch abandoned by timeout gives its bytes back and its messages
// are released.
func TestBatchStagedBytesGivenBackAtTimeout(t *testing.T) {
	t.Parallel()
	svc, core := batchService(t, BatchLimits{Timeout: 20 * time.Millisecond})
	st := svc.stream("B")
	publishBatchData(core, "slow", "1", "_INBOX.r1", bytes.Repeat([]byte("d"), 4096))
	if s, all := stagedCounts(svc, st); s == 0 || all != s {
		t.Fatalf("staged %d, in all %d", s, all)
	}
	w := firstStaged(t, st, "slow")
	deadline := time.Now().Add(5 * time.Second)
	for st.openBatches() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("batch still open")
		}
		time.Sleep(time.Millisecond) // polling the timer's effect, not waiting for it
	}
	if s, all := stagedCounts(svc, st); s != 0 || all != 0 {
		t.Fatalf("after the timeout: staged %d, in all %d", s, all)
	}
	if !released(w) {
		t.Fatal("the abandoned batch's messages are still held")
	}
}

// MaxStagedBytes bounds all streams together: a batch that would fit
// alone but not beside the others is refused as too many in flight.
func TestBatchStagedBytesBoundedInTotal(t *testing.T) {
	t.Parallel()
	svc, core := batchService(t, BatchLimits{MaxStagedBytes: 1000})
	st := svc.stream("B")
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.C", reply: "_INBOX.mk",
		body: []byte(`{"name":"C","subjects":["c.>"],"allow_atomic":true}`)})
	data := bytes.Repeat([]byte("d"), 500)
	publishBatchData(core, "a", "1", "_INBOX.a", data)
	hdr := []byte("NATS/1.0\r\nNats-Batch-Id: c\r\nNats-Batch-Sequence: 1\r\n\r\n")
	core.Deliver("c.x", "c.x", "_INBOX.c", hdr, data)
	if got := sentTo(core, "_INBOX.c"); len(got) != 1 || !bytes.Contains(got[0], []byte(`"code":429,"err_code":10210`)) {
		t.Fatalf("beside the other stream's batch: %q", got)
	}
	if s, all := stagedCounts(svc, svc.stream("C")); s != 0 || all == 0 {
		t.Fatalf("C staged %d, in all %d", s, all)
	}
	publishBatchData(core, "a", "2!", "_INBOX.a2", []byte("x"))
	if got := sentTo(core, "_INBOX.a2"); len(got) != 1 || !bytes.Contains(got[0], []byte(`"count":2`)) {
		t.Fatalf("commit a: %q", got)
	}
	if s, all := stagedCounts(svc, st); s != 0 || all != 0 {
		t.Fatalf("after the commit: staged %d, in all %d", s, all)
	}
	core.Deliver("c.x", "c.x", "_INBOX.c2", hdr, data)
	if got := sentTo(core, "_INBOX.c2"); len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("C after a committed: %q", got)
	}
}
