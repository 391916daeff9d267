package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/server"
)

// A flipped byte in any kind of file a stream's directory holds (the
// kinds of jetlog/doc.go's directory layout), made while the server is
// stopped, must never turn into wrong data: the server starts, the other
// stream is intact, and the damaged stream either is reported offline
// (10118, logged) or serves every acknowledged message as it was
// published, except those in a loss range it logged; its seqs never go
// back. A damaged consumer file either gets the consumer skipped and
// logged, or the consumer is rebuilt, logged, and still delivers every
// message that was not acked (again, at worst).
func TestBitFlipInEveryStoreFile(t *testing.T) {
	t.Parallel()
	const msgs, ackedByC = 20, 5
	kinds := []struct {
		name     string
		glob     string // under the stream's directory
		consumer bool   // a file of consumer C
	}{
		{"segment", "*.seg", false},
		{"segment index", "*.idx", false},
		{"catalog snapshot", "catalog.snap", false},
		{"seq mark", "seq.mark", false},
		{"stream meta", "stream.meta", false},
		{"dedup snapshot", "dedup.snap", false},
		{"consumer meta", "consumers/C/consumer.meta", true},
		{"consumer snapshot", "consumers/C/state.snap", true},
		{"consumer journal", "consumers/C/journal.*", true},
	}
	for _, kind := range kinds {
		for _, at := range []string{"middle", "last byte"} {
			t.Run(kind.name+"/"+at, func(t *testing.T) {
				t.Parallel()
				store := t.TempDir()
				s := startBus(t, server.Options{JetStream: true, StoreDir: store})
				js := jsClient(t, s)
				ctx := ctxT(t)
				acked := newAckedStreams(js)
				for _, name := range []string{"A", "B"} {
					if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{"s" + name + ".>"}}); err != nil {
						t.Fatal(err)
					}
				}
				for i := range msgs {
					for _, name := range []string{"A", "B"} {
						payload := fmt.Sprintf("%s-%d-%s", name, i, strings.Repeat("x", 80))
						ack, err := js.Publish(ctx, "s"+name+".x", []byte(payload), jetstream.WithMsgID(fmt.Sprintf("%s-%d", name, i)))
						if err != nil {
							t.Fatal(err)
						}
						if acked.acked[name] == nil {
							acked.acked[name] = map[uint64]string{}
						}
						acked.acked[name][ack.Sequence] = payload
					}
				}
				c, err := mustStream(t, js, "A").CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				batch, err := c.Fetch(ackedByC, jetstream.FetchMaxWait(2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for m := range batch.Messages() {
					if err := m.DoubleAck(ctx); err != nil {
						t.Fatal(err)
					}
				}
				shutdown(t, s)

				dirA := filepath.Join(store, "jetstream", "A")
				if kind.name == "consumer snapshot" {
					compactConsumer(t, dirA, "C", ackedByC+1)
				}
				files, _ := filepath.Glob(filepath.Join(dirA, kind.glob))
				if len(files) == 0 {
					t.Fatalf("no %s file (%s) in %s: the store layout changed; files: %v", kind.name, kind.glob, dirA, listFiles(t, dirA))
				}
				for _, f := range files {
					flipByte(t, f, at)
				}

				logger, logs := newLogBuffer()
				s2 := startBus(t, server.Options{JetStream: true, StoreDir: store, Logger: logger})
				js2 := jsClient(t, s2)
				checkAcked(ctx, t, js2, "B", acked.acked["B"])
				if _, err := js2.Publish(ctx, "sB.x", []byte("more")); err != nil {
					t.Fatalf("publish to the undamaged stream: %v", err)
				}

				stA, err := js2.Stream(ctx, "A")
				if apiCode(err) == 10118 {
					if len(logs.lines("level=ERROR", "stream=A")) == 0 {
						t.Fatal("stream offline but not logged")
					}
					t.Logf("reported offline: %v", err)
					return
				}
				if err != nil {
					t.Fatalf("info of the damaged stream: %v", err)
				}
				lost := lossRanges(t, logs)
				info := stA.CachedInfo()
				if info.State.LastSeq < msgs {
					t.Fatalf("last seq went back to %d", info.State.LastSeq)
				}
				for seq, payload := range acked.acked["A"] {
					m, err := stA.GetMsg(ctx, seq)
					switch {
					case err == nil && string(m.Data) == payload:
					case err == nil:
						t.Fatalf("seq %d reads %q, %q was published", seq, m.Data, payload)
					case lost.has(seq):
					default:
						t.Fatalf("seq %d unreadable (%v) and not reported lost; reported: %v; log: %q", seq, err, lost, logs.lines("level=ERROR"))
					}
				}
				if n := uint64(len(acked.acked["A"]) - lost.count(msgs)); info.State.Msgs != n {
					t.Fatalf("stream holds %d messages; %d were acknowledged and not reported lost", info.State.Msgs, n)
				}
				// The dedup window survived (dedup.snap is only a shortcut):
				// the last message's id is still a duplicate.
				if !lost.has(msgs) {
					ack, err := js2.Publish(ctx, "sA.x", []byte("again"), jetstream.WithMsgID(fmt.Sprintf("A-%d", msgs-1)))
					if err != nil || !ack.Duplicate {
						t.Fatalf("a duplicate of an acknowledged message after the damage: %+v, %v", ack, err)
					}
				}
				ack, err := js2.Publish(ctx, "sA.x", []byte("after"))
				if err != nil || ack.Sequence <= msgs {
					t.Fatalf("publish after the damage: %+v, %v", ack, err)
				}
				if len(lost) > 0 || len(logs.lines("level=ERROR")) > 0 {
					t.Logf("served, reported: %q", logs.lines("level=ERROR"))
				}
				if kind.consumer {
					checkConsumerAfterDamage(t, stA, logs, ackedByC, msgs)
				}
			})
		}
	}
}

// checkConsumerAfterDamage: consumer C is either skipped and logged, or
// delivers every message it had not acked (it may deliver acked ones
// again, if its damage was logged).
func checkConsumerAfterDamage(t *testing.T, st jetstream.Stream, logs *logBuffer, acked, msgs int) {
	t.Helper()
	ctx := ctxT(t)
	c, err := st.Consumer(ctx, "C")
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		if len(logs.lines("level=ERROR", "consumer=C")) == 0 {
			t.Fatal("consumer gone without a log line")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint64]bool{}
	for {
		batch, err := c.Fetch(msgs+1, jetstream.FetchMaxWait(300*time.Millisecond))
		if err != nil && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			got[meta.Sequence.Stream] = true
			_ = m.Ack()
		}
		if n == 0 {
			break
		}
	}
	for seq := uint64(acked + 1); seq <= uint64(msgs)+1; seq++ { // +1: the publish after the damage
		if !got[seq] {
			t.Fatalf("consumer skipped unacked seq %d (got %v)", seq, got)
		}
	}
	if len(got) > msgs+1-acked && len(logs.lines("level=ERROR", "consumer=C")) == 0 {
		t.Fatalf("consumer delivered acked messages again without a log line")
	}
}

// compactConsumer makes the stopped stream's consumer write its
// snapshot (state.snap), which the server does only once the journal
// passes 1 MiB: it opens the log with jetlog directly and delivers and
// naks seq, so the consumer's state is what it was plus seq due again.
func compactConsumer(t *testing.T, dir, name string, seq uint64) {
	t.Helper()
	cfg, _, err := jetlog.LoadConfig(nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	l, err := jetlog.Open(dir, cfg, jetlog.Options{CompactBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := l.LoadConsumerConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.OpenConsumer(name, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Deliver(seq); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Nak(seq, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// flipByte inverts one bit of the file's byte at "middle" or "last byte".
func flipByte(t *testing.T, name, at string) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		t.Fatalf("%s is empty", name)
	}
	i := len(b) / 2
	if at == "last byte" {
		i = len(b) - 1
	}
	b[i] ^= 0x10
	writeFile(t, name, b)
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	return out
}

// seqRanges are the loss ranges a server logged ("jetlog: messages lost").
type seqRanges [][2]uint64

var lossLine = regexp.MustCompile(`first=(\d+) last=(\d+)`)

func lossRanges(t *testing.T, logs *logBuffer) seqRanges {
	t.Helper()
	var out seqRanges
	for _, line := range logs.lines("messages lost") {
		m := lossLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("loss line without a range: %q", line)
		}
		first, _ := strconv.ParseUint(m[1], 10, 64)
		last, _ := strconv.ParseUint(m[2], 10, 64)
		out = append(out, [2]uint64{first, last})
	}
	return out
}

func (r seqRanges) has(seq uint64) bool {
	for _, x := range r {
		if seq >= x[0] && seq <= x[1] {
			return true
		}
	}
	return false
}

// count is how many seqs up to max the ranges cover.
func (r seqRanges) count(max uint64) int {
	n := 0
	for seq := uint64(1); seq <= max; seq++ {
		if r.has(seq) {
			n++
		}
	}
	return n
}
