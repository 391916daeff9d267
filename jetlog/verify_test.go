package jetlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// verifyLog opens a stream on the strict MemFS with small segments, so
// that n messages fill several sealed ones, each with its index.
func verifyLog(t *testing.T, keys *Keyring, n int) (*vfs.MemFS, *Log) {
	t.Helper()
	fsys := vfs.NewMemFS()
	l := openLog(t, "/s", StreamConfig{Name: "S"}, Options{FS: fsys, SegmentSize: 2048, Keys: keys})
	for i := range n {
		mustAppend(t, l, fmt.Sprintf("v.%d", i%7), fmt.Sprintf("payload-%03d-%s", i, strings.Repeat("x", 40)))
	}
	return fsys, l
}

// recordOf finds seq's record in the index of the sealed segment id: its
// offset and size.
func recordOf(t *testing.T, fsys FS, l *Log, id uint64, seq uint64) (int64, uint32) {
	t.Helper()
	data, err := readSealed(fsys, l.seal, path.Join("/s", idxName(id)))
	if err != nil {
		t.Fatal(err)
	}
	_, entries, ok := decodeIndex(data)
	if !ok {
		t.Fatal("index unreadable")
	}
	for _, e := range entries {
		if e.kind == kindMsg && e.seq == seq {
			return e.off, e.size
		}
	}
	t.Fatalf("seq %d not in %s", seq, idxName(id))
	return 0, 0
}

func mustVerify(t *testing.T, l *Log) *VerifyReport {
	t.Helper()
	rep, err := l.Verify(context.Background(), VerifyOptions{})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func reportText(r *VerifyReport) string {
	var b bytes.Buffer
	r.Write(&b)
	return b.String()
}

// A sound stream verified while a publisher appends: no damage, every
// sealed segment and the active one read, and no append lost or failed.
func TestVerifySoundStreamWhileAppending(t *testing.T) {
	t.Parallel()
	_, l := verifyLog(t, nil, 300)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := l.Append(Msg{Subject: "v.live", Data: []byte(fmt.Sprintf("more-%d", i))}, Expect{}); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 5 {
		rep := mustVerify(t, l)
		if rep.Damaged() {
			t.Fatalf("sound stream reported damaged:\n%s", reportText(rep))
		}
		if rep.Segments < 5 || rep.Records < 300 || rep.Bytes == 0 {
			t.Fatalf("checked %d segments, %d records, %d bytes", rep.Segments, rep.Records, rep.Bytes)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	st := l.State()
	for seq := uint64(1); seq <= st.LastSeq; seq++ {
		if _, err := l.Get(seq); err != nil {
			t.Fatalf("Get(%d) after verify: %v", seq, err)
		}
	}
	if out := reportText(mustVerify(t, l)); !strings.HasPrefix(out, fmt.Sprintf("S: ok, %d messages, seqs 1..%d, 0 consumers", st.Msgs, st.LastSeq)) {
		t.Fatalf("report: %s", out)
	}
}

// A bit flipped in one record of a sealed segment, in a plain and in an
// encrypted stream: exactly that seq is lost (acknowledged), the record
// is named with its file and offset, the index still matches, and the
// stream keeps serving the others.
func TestVerifyFindsBitFlipInSealedSegment(t *testing.T) {
	t.Parallel()
	ring, err := NewKeyring(ChaChaPoly, "verify-test-key", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		keys *Keyring
	}{{"plain", nil}, {"encrypted", ring}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys, l := verifyLog(t, tc.keys, 200)
			const seq = 5
			off, size := recordOf(t, fsys, l, 1, seq)
			flipBit(t, fsys, path.Join("/s", segName(1)), off+int64(size)-3, 2)
			rep := mustVerify(t, l)
			if len(rep.Losses) != 1 || rep.Losses[0].SeqRange != (SeqRange{seq, seq}) || rep.Losses[0].Acked != LossAcked || rep.Losses[0].Segment != segName(1) {
				t.Fatalf("losses %+v\n%s", rep.Losses, reportText(rep))
			}
			if len(rep.Corrupt) != 1 || rep.Corrupt[0].Segment != segName(1) || rep.Corrupt[0].Offset != off {
				t.Fatalf("damaged records %+v, want %s at %d", rep.Corrupt, segName(1), off)
			}
			if len(rep.DamagedIndexes) != 0 || len(rep.Problems) != 0 {
				t.Fatalf("indexes %v, problems %v", rep.DamagedIndexes, rep.Problems)
			}
			if out := reportText(rep); !strings.Contains(out, "lost seqs 5 (acked): corrupt record in "+segName(1)) {
				t.Fatalf("text:\n%s", out)
			}
			for _, s := range []uint64{seq - 1, seq + 1, 200} {
				if _, err := l.Get(s); err != nil {
					t.Fatalf("Get(%d): %v", s, err)
				}
			}
			mustAppend(t, l, "v.after", "still taking appends")
		})
	}
}

// A deleted message's damaged record is damage, not a loss.
func TestVerifyDamageOfDeletedMessageIsNoLoss(t *testing.T) {
	t.Parallel()
	fsys, l := verifyLog(t, nil, 200)
	off, size := recordOf(t, fsys, l, 1, 3)
	if err := l.Delete(3); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fsys, path.Join("/s", segName(1)), off+int64(size)/2, 0)
	rep := mustVerify(t, l)
	if len(rep.Losses) != 0 || len(rep.Corrupt) != 1 {
		t.Fatalf("losses %+v, damaged %+v", rep.Losses, rep.Corrupt)
	}
}

// A truncated index of a sealed segment is reported by name; its
// segment's messages are all there.
func TestVerifyFindsTruncatedIndex(t *testing.T) {
	t.Parallel()
	fsys, l := verifyLog(t, nil, 200)
	name := path.Join("/s", idxName(2))
	data, err := readAll(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	truncateFile(t, fsys, name, int64(len(data)/2))
	rep := mustVerify(t, l)
	if len(rep.DamagedIndexes) != 1 || rep.DamagedIndexes[0] != idxName(2) || len(rep.Losses) != 0 || len(rep.Corrupt) != 0 {
		t.Fatalf("report:\n%s", reportText(rep))
	}
	if out := reportText(rep); !strings.Contains(out, "index "+idxName(2)+" is damaged or missing") {
		t.Fatalf("text:\n%s", out)
	}
}

// A flipped byte in a consumer's journal is reported with the
// consumer, the file and the offset; so is a damaged seq.mark.
func TestVerifyFindsDamagedJournalAndMark(t *testing.T) {
	t.Parallel()
	fsys, l := verifyLog(t, nil, 50)
	c, err := l.OpenConsumer("worker", ConsumerConfig{AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for seq := uint64(1); seq <= 20; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	if rep := mustVerify(t, l); rep.Damaged() || len(rep.Consumers) != 1 {
		t.Fatalf("before the damage:\n%s", reportText(rep))
	}
	journal := path.Join("/s", consumersDir, "worker", journalName(0))
	data, err := readAll(fsys, journal)
	if err != nil {
		t.Fatal(err)
	}
	flipBit(t, fsys, journal, int64(len(data)/2), 3)
	flipBit(t, fsys, path.Join("/s", markFile), 6, 1)
	rep := mustVerify(t, l)
	if len(rep.Consumers) != 1 || len(rep.Consumers[0].Corrupt) != 1 || rep.Consumers[0].Corrupt[0].Segment != "consumers/worker/journal.0" {
		t.Fatalf("consumers %+v\n%s", rep.Consumers, reportText(rep))
	}
	out := reportText(rep)
	if !strings.Contains(out, "consumer worker journal damaged: consumers/worker/journal.0 at offset") || !strings.Contains(out, "seq.mark damaged") {
		t.Fatalf("text:\n%s", out)
	}
	if len(rep.Losses) != 0 || len(rep.Corrupt) != 0 {
		t.Fatalf("stream damage reported: %s", out)
	}
}

// Verify after Close fails with ErrClosed.
func TestVerifyClosedLog(t *testing.T) {
	t.Parallel()
	l, err := Open("/s", StreamConfig{Name: "S"}, Options{FS: vfs.NewMemFS()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Verify(context.Background(), VerifyOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Verify after Close: %v", err)
	}
}

// A memory stream is checked too: its records, in memory.
func TestVerifyMemoryStream(t *testing.T) {
	t.Parallel()
	l := openLog(t, "/m", StreamConfig{Name: "M", Storage: StorageMemory}, Options{SegmentSize: 2048})
	for i := range 100 {
		mustAppend(t, l, "m.x", fmt.Sprintf("memory-%d", i))
	}
	rep := mustVerify(t, l)
	if rep.Damaged() || rep.Records < 100 || rep.Segments < 2 || rep.Messages != 100 {
		t.Fatalf("memory stream:\n%s%+v", reportText(rep), rep)
	}
}

// Damage anywhere in a record, its length field included, and in the
// last record of a sealed segment: that seq and no other is lost, and
// the records after it are read again (resynchronised by the index).
func TestVerifyDamageAnywhereInARecord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seq  func(l *Log) uint64
		at   func(off int64, size uint32) int64
	}{
		{"length field", func(*Log) uint64 { return 6 }, func(off int64, _ uint32) int64 { return off + 1 }},
		{"crc field", func(*Log) uint64 { return 6 }, func(off int64, _ uint32) int64 { return off + 5 }},
		{"seq", func(*Log) uint64 { return 6 }, func(off int64, _ uint32) int64 { return off + 10 }},
		{"last record of the segment", func(l *Log) uint64 {
			l.mu.RLock()
			defer l.mu.RUnlock()
			return l.cat.segs[0].end() - 1
		}, func(off int64, size uint32) int64 { return off + int64(size) - 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fsys, l := verifyLog(t, nil, 200)
			seq := tc.seq(l)
			off, size := recordOf(t, fsys, l, 1, seq)
			flipBit(t, fsys, path.Join("/s", segName(1)), tc.at(off, size), 6)
			rep := mustVerify(t, l)
			if len(rep.Losses) != 1 || rep.Losses[0].SeqRange != (SeqRange{seq, seq}) {
				t.Fatalf("seq %d damaged: losses %+v\n%s", seq, rep.Losses, reportText(rep))
			}
			if len(rep.Corrupt) != 1 || rep.Corrupt[0].Offset != off || len(rep.DamagedIndexes) != 0 {
				t.Fatalf("damaged records %+v (want offset %d), indexes %v", rep.Corrupt, off, rep.DamagedIndexes)
			}
		})
	}
}

// Without its index (removed) a damaged segment is resynchronised byte
// by byte: still exactly the damaged seq, and the index reported missing.
func TestVerifyDamageWithoutIndex(t *testing.T) {
	t.Parallel()
	fsys, l := verifyLog(t, nil, 200)
	off, size := recordOf(t, fsys, l, 1, 4)
	if err := fsys.Remove(path.Join("/s", idxName(1))); err != nil {
		t.Fatal(err)
	}
	flipBit(t, fsys, path.Join("/s", segName(1)), off+int64(size)/2, 1)
	rep := mustVerify(t, l)
	if len(rep.Losses) != 1 || rep.Losses[0].SeqRange != (SeqRange{4, 4}) || len(rep.Corrupt) != 1 ||
		len(rep.DamagedIndexes) != 1 || rep.DamagedIndexes[0] != idxName(1) {
		t.Fatalf("report:\n%s", reportText(rep))
	}
}

// BytesPerSecond paces the reads, and a paced verify ends with its ctx.
func TestVerifyPaced(t *testing.T) {
	t.Parallel()
	_, l := verifyLog(t, nil, 200)
	full := mustVerify(t, l)
	rate := int64(full.Bytes) * 4 // about a quarter of a second
	start := time.Now()
	rep, err := l.Verify(context.Background(), VerifyOptions{BytesPerSecond: rate})
	if err != nil || rep.Damaged() {
		t.Fatalf("paced: %v %+v", err, rep)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("%d bytes at %d a second took %s", full.Bytes, rate, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Verify(ctx, VerifyOptions{BytesPerSecond: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx ended: %v", err)
	}
}
