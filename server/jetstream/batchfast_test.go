package jetstream

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseFastBatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		reply string
		ok    bool
		want  fastBatchMsg
	}{
		{"_INBOX.x.id1.10.fail.1.0.$FI", true, fastBatchMsg{id: "id1", seq: 1, flow: 10}},
		{"_INBOX.x.id1.0.ok.7.1.$FI", true, fastBatchMsg{id: "id1", seq: 7, flow: 10, gapOK: true, op: fastAppend}},
		{"in.id.99999.fail.3.2.$FI", true, fastBatchMsg{id: "id", seq: 3, flow: 65535, op: fastCommit}},
		{"in.id.-4.fail.3.4.$FI", true, fastBatchMsg{id: "id", seq: 3, flow: 10, op: fastPing}},
		{"in.id.5.fail.2.3.$FI", true, fastBatchMsg{id: "id", seq: 2, flow: 5, op: fastCommitEOB}},
		{"id.10.fail.1.0.$FI", false, fastBatchMsg{}},     // no inbox
		{"in.id.10.fail.1.5.$FI", false, fastBatchMsg{}},  // no such op
		{"in.id.10.fail.2.0.$FI", false, fastBatchMsg{}},  // a start after 1
		{"in.id.10.fail.1.1.$FI", false, fastBatchMsg{}},  // an append at 1
		{"in.id.10.fail.1.3.$FI", false, fastBatchMsg{}},  // an empty batch
		{"in.id.10.fail.0.2.$FI", false, fastBatchMsg{}},  // seq 0
		{"in.id.10.maybe.1.0.$FI", false, fastBatchMsg{}}, // no such gap mode
		{"in.id.10.fail.+1.0.$FI", false, fastBatchMsg{}}, // a sign
		{"in.id.10.fail.1.+0.$FI", false, fastBatchMsg{}}, // a sign
		{"in.id.10.fail.18446744073709551615.1.$FI", false, fastBatchMsg{}},
		{"$FI", false, fastBatchMsg{}},
	} {
		got, ok := parseFastBatch(c.reply)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("parseFastBatch(%q) = %+v, %v; want %+v, %v", c.reply, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParseFastBatch: any reply subject parses without a panic, and
// what it accepts is a batch message the state machine can take.
func FuzzParseFastBatch(f *testing.F) {
	for _, s := range []string{"_INBOX.x.id1.10.fail.1.0.$FI", "a.b.c.d.e.f.$FI", "in.id.99999.ok.3.4.$FI", "..... .$FI"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		m, ok := parseFastBatch(reply + fastBatchSuffix)
		if !ok {
			return
		}
		if m.seq == 0 || m.op < fastStart || m.op > fastPing || m.flow == 0 || strings.Contains(m.id, ".") ||
			m.op == fastStart && m.seq != 1 || m.op == fastAppend && m.seq == 1 {
			t.Fatalf("parseFastBatch(%q) = %+v", reply, m)
		}
	})
}

// fastService is a service on a fake core with stream B allowing fast
// batches, and limits as given.
func fastService(t testing.TB, lim BatchLimits) (*Service, *fakeCore) {
	t.Helper()
	return batchServiceWith(t, lim, `{"name":"B","subjects":["b.>"],"allow_batched":true}`)
}

// A fast batch that goes quiet for the batch timeout is forgotten: its
// next message is refused as of an unknown batch.
func TestFastBatchForgottenAfterTimeout(t *testing.T) {
	t.Parallel()
	svc, core := fastService(t, BatchLimits{Timeout: 20 * time.Millisecond})
	st := svc.stream("B")
	core.Deliver("b.x", "b.x", "_R.q.10.fail.1.0.$FI", nil, []byte("1"))
	deadline := time.Now().Add(5 * time.Second)
	for st.openFastBatches() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("batch still open")
		}
		time.Sleep(time.Millisecond) // polling the timer's effect, not waiting for it
	}
	core.Deliver("b.x", "b.x", "_R.q.10.fail.2.1.$FI", nil, []byte("2"))
	got := sentTo(core, "_R.q.10.fail.2.1")
	if len(got) != 1 || !strings.Contains(string(got[0]), `"err_code":10208`) {
		t.Fatalf("after the timeout: %q", got)
	}
}

// The open fast batches are bounded per stream (and in total) by the
// batch limits' inflight counts.
func TestFastBatchInflightBounded(t *testing.T) {
	t.Parallel()
	svc, core := fastService(t, BatchLimits{MaxInflightPerStream: 1})
	core.Deliver("b.x", "b.x", "_R.a.10.fail.1.0.$FI", nil, []byte("1"))
	core.Deliver("b.x", "b.x", "_R.b.10.fail.1.0.$FI", nil, []byte("1"))
	got := sentTo(core, "_R.b.")
	if len(got) != 1 || !strings.Contains(string(got[0]), `"err_code":10211`) {
		t.Fatalf("a second batch beside a first: %q", got)
	}
	core.Deliver("b.x", "b.x", "_R.a.10.fail.2.3.$FI", nil, nil) // ends a
	core.Deliver("b.x", "b.x", "_R.c.10.fail.1.0.$FI", nil, []byte("1"))
	if got := sentTo(core, "_R.c."); len(got) != 1 || !strings.Contains(string(got[0]), `"type":"ack"`) {
		t.Fatalf("a batch after the first ended: %q", got)
	}
	if n := svc.sh.inflightFast.Load(); n != 1 {
		t.Fatalf("%d fast batches counted open, want 1", n)
	}
}

// FuzzFastBatchFlow publishes arbitrary sequences of fast batch messages
// (ids, seqs, ops, gap modes, flows): nothing panics, and once the store
// has caught up every open batch's counters are consistent and the
// server's count of open batches is the stream's; a committing batch
// is done once its messages are stored.
func FuzzFastBatchFlow(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 2, 1, 0, 3, 2})
	f.Add([]byte{4, 1, 8, 4, 3, 9, 4, 9, 4, 4, 9, 3})
	f.Add([]byte{1, 1, 0, 2, 1, 0, 1, 2, 1, 2, 5, 4, 1, 3, 3})
	svc, core := fastService(f, BatchLimits{MaxInflightPerStream: 2})
	st := svc.stream("B")
	f.Fuzz(func(t *testing.T, ops []byte) {
		st.dropFastBatches() // each input on its own
		for i := 0; i+2 < len(ops) && i < 300; i += 3 {
			id, flow := ops[i]%3, ops[i]>>2
			seq, op, gap := ops[i+1]%8, ops[i+2]%5, map[bool]string{false: "fail", true: "ok"}[ops[i+2]&8 != 0]
			reply := fmt.Sprintf("_R.f%d.%d.%s.%d.%d.$FI", id, flow, gap, seq, op)
			var hdr []byte
			if ops[i+2]&16 != 0 {
				hdr = []byte("NATS/1.0\r\nNats-Expected-Last-Sequence: 1\r\n\r\n")
			}
			core.Deliver("b.x", "b.x", reply, hdr, []byte("x"))
		}
		if err := st.log.Sync(); err != nil {
			t.Fatal(err)
		}
		st.fast.mu.Lock()
		defer st.fast.mu.Unlock()
		if n := svc.sh.inflightFast.Load(); n != int64(len(st.fast.open)) {
			t.Fatalf("%d fast batches counted, %d open", n, len(st.fast.open))
		}
		for id, b := range st.fast.open {
			if b.pending != 0 || b.commit || b.pseq > b.lseq || b.fseq > b.pseq || b.ackMsgs == 0 {
				t.Fatalf("batch %s: %+v", id, *b)
			}
		}
	})
}
