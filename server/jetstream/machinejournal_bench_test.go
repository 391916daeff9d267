package jetstream

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// BenchmarkMachineFetchJournaled is BenchmarkMachineFetch with a durable
// consumer's ledger (a jetlog.Consumer journaling to the disk, lazily as
// the server does for deliveries and plain acks): pulls of 500 acked in
// runs of 16, as `nats bench js fetch` drives it. journal-B/msg is what
// the journal grew by per message (compaction is off).
//
//	go test ./server/jetstream -run '^$' -bench MachineFetchJournaled -benchmem
func BenchmarkMachineFetchJournaled(b *testing.B) {
	var cfg consumerConfig
	if err := json.Unmarshal([]byte(`{"durable_name":"C","ack_policy":"explicit"}`), &cfg); err != nil {
		b.Fatal(err)
	}
	if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
		b.Fatal(e)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dir := b.TempDir()
	l, err := jetlog.Open(dir, jetlog.StreamConfig{Name: "S", Subjects: []string{"s.>"}},
		jetlog.Options{Now: func() time.Time { return now }, CompactBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	jc, err := l.OpenConsumer("C", jetlog.ConsumerConfig{AckWait: time.Duration(cfg.AckWait), MaxAckPending: cfg.MaxAckPending})
	if err != nil {
		b.Fatal(err)
	}
	led := journaled{Consumer: jc}
	src := &fakeStream{deaf: map[string]bool{}}
	for i := range b.N {
		src.msgs = append(src.msgs, jetlog.Msg{Seq: uint64(i + 1), Subject: "s.x", Data: make([]byte, 128), Time: now})
	}
	m := newMachine(machineConfig{stream: "S", cfg: cfg, src: src, ledger: led, now: now, start: 1})
	acks := make([]ackMsg, 0, 500)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		acks = pullAcks(m, 500, now, acks[:0])
		if len(acks) == 0 {
			b.Fatalf("stuck after %d of %d", done, b.N)
		}
		done += len(acks)
		for len(acks) > 0 {
			n := min(16, len(acks))
			m.Acks(acks[:n], now)
			acks = acks[n:]
		}
	}
	b.StopTimer()
	var size int64
	_ = filepath.WalkDir(filepath.Join(dir, "consumers"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if st, err := os.Stat(p); err == nil {
				size += st.Size()
			}
		}
		return nil
	})
	b.ReportMetric(float64(size)/float64(b.N), "journal-B/msg")
}

// TestMachineFetchJournaledAllocs pins the consumer's allocations per
// message on the fetch path, over a real journal: a pull of 100, its
// deliveries journaled, their ack replies built, their acks parsed and
// journaled, costs a few allocations a pull (the pull request, the
// batch's replies, the fake stream's read: 12 when written), none a
// message (before: 3 a message).
func TestMachineFetchJournaledAllocs(t *testing.T) {
	var cfg consumerConfig
	if err := json.Unmarshal([]byte(`{"durable_name":"C","ack_policy":"explicit"}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
		t.Fatal(e)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l, err := jetlog.Open(t.TempDir(), jetlog.StreamConfig{Name: "S", Subjects: []string{"s.>"}}, jetlog.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	jc, err := l.OpenConsumer("C", jetlog.ConsumerConfig{AckWait: time.Duration(cfg.AckWait), MaxAckPending: cfg.MaxAckPending})
	if err != nil {
		t.Fatal(err)
	}
	const pulls, batch = 60, 100
	src := &fakeStream{deaf: map[string]bool{}}
	for i := range pulls * batch {
		src.msgs = append(src.msgs, jetlog.Msg{Seq: uint64(i + 1), Subject: "s.x", Data: make([]byte, 128), Time: now})
	}
	m := newMachine(machineConfig{stream: "S", cfg: cfg, src: src, ledger: journaled{Consumer: jc}, now: now, start: 1})
	subjects := make([][]byte, 0, batch)
	acks := make([]ackMsg, 0, batch)
	body := []byte("+ACK")
	cycle := func() {
		a := m.Pull("in", []byte("100"), now)
		subjects = subjects[:0]
		for _, o := range a.out {
			if o.deliver {
				subjects = append(subjects, append([]byte(nil), o.reply...)) // a client's copy, not counted below
			}
		}
		if len(subjects) != batch {
			t.Fatalf("%d delivered", len(subjects))
		}
		acks = acks[:0]
		for _, s := range subjects {
			seq, _ := parseAckSubject(s)
			acks = append(acks, parseAck(seq, body, ""))
		}
		m.Acks(acks, now)
	}
	for range 10 { // warm up: scratch space, the free pending entries
		cycle()
	}
	perPull := testing.AllocsPerRun(pulls-20, cycle) - batch // the client's copies
	if perPull > 20 {
		t.Fatalf("%.1f allocations a pull of %d", perPull, batch)
	}
	t.Logf("%.1f allocations a pull of %d", perPull, batch)
}
