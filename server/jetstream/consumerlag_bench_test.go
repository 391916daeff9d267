package jetstream

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// BenchmarkMachineCatchUp reads a whole stream of one 64 B message per
// subject (subj.<i%100>.<i>) through the consumer machine over a real
// log, in no_wait pulls of 1,000 as `nats` fetches do (issue #30): with
// no filter, with subj.> and with 100 wildcard filters subj.<k>.* that
// together match everything. Each reply's pending count is what a
// filtered consumer paid for; msgs/s is the catch-up rate. Run with
// -benchtime=1x: building the log takes a few seconds.
//
//	go test ./server/jetstream -run '^$' -bench MachineCatchUp -benchtime=1x
func BenchmarkMachineCatchUp(b *testing.B) {
	const n = 200_000
	l, err := jetlog.Open(b.TempDir(), jetlog.StreamConfig{Name: "S", Subjects: []string{"subj.>"}, Durability: jetlog.DurabilityNone}, jetlog.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	batch := make([]jetlog.Msg, 1000)
	data := make([]byte, 64)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = jetlog.Msg{Subject: "subj." + strconv.Itoa((i+j)%100) + "." + strconv.Itoa(i+j), Data: data}
		}
		if _, err := l.AppendBatch(batch, jetlog.Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	hundred := make([]string, 100)
	for k := range hundred {
		hundred[k] = "subj." + strconv.Itoa(k) + ".*"
	}
	for _, bc := range []struct {
		name    string
		filters []string
	}{
		{"filters=none", nil},
		{"filters=wildcard", []string{"subj.>"}},
		{"filters=100-wildcards", hundred},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := consumerConfig{AckPolicy: AckNone}
			cfg.Name = "C"
			cfg.FilterSubjects = bc.filters
			raw, _ := json.Marshal(cfg)
			cfg = consumerConfig{}
			if err := json.Unmarshal(raw, &cfg); err != nil {
				b.Fatal(err)
			}
			if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"subj.>"}}); e != nil {
				b.Fatal(e)
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var total time.Duration
			for b.Loop() {
				cs := newConsumerSource(&consumerReader{log: l}, cfg)
				src := listening{cs}
				led := newMemLedger(jetlog.NewConsumerState(time.Duration(cfg.AckWait), nil, func() time.Time { return now }))
				m := newMachine(machineConfig{stream: "S", cfg: cfg, src: src, ledger: led, now: now, start: 1})
				start := time.Now()
				got := 0
				for got < n {
					a := m.Pull("in", []byte(`{"batch":1000,"no_wait":true}`), now)
					k := 0
					for _, o := range a.out {
						if o.deliver {
							k++
						}
					}
					if k == 0 {
						b.Fatalf("stuck after %d of %d", got, n)
					}
					got += k
				}
				total += time.Since(start)
				cs.close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "msgs/s")
		})
	}
}

// listening is a source whose every reply subject has a listener.
type listening struct{ source }

func (listening) HasInterest(string) bool { return true }
