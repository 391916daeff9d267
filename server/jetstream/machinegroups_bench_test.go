package jetstream

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// BenchmarkMachineFetch measures the consumer machine alone delivering
// and acking a backlog in pulls of 100, per message: a plain consumer
// (whose hot path groups must leave alone) and one grouped by a header
// over 1,000 keys.
//
//	go test ./server/jetstream -run '^$' -bench MachineFetch -benchmem
func BenchmarkMachineFetch(b *testing.B) {
	for _, mode := range []struct{ name, cfg string }{
		{"plain", `{"durable_name":"C","ack_policy":"explicit"}`},
		{"groups", `{"durable_name":"C","ack_policy":"explicit","x_bus_group_by":{"header":"Key"}}`},
	} {
		b.Run("consumer="+mode.name, func(b *testing.B) {
			var cfg consumerConfig
			if err := json.Unmarshal([]byte(mode.cfg), &cfg); err != nil {
				b.Fatal(err)
			}
			if e := cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
				b.Fatal(e)
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			src := &fakeStream{deaf: map[string]bool{}}
			for i := range b.N {
				src.msgs = append(src.msgs, jetlog.Msg{Seq: uint64(i + 1), Subject: "s.x", Data: make([]byte, 64), Time: now,
					Header: []byte("NATS/1.0\r\nKey: " + strconv.Itoa(i%1000) + "\r\n\r\n")})
			}
			led := newMemLedger(jetlog.NewConsumerState(time.Duration(cfg.AckWait), nil, func() time.Time { return now }))
			m := newMachine(machineConfig{stream: "S", cfg: cfg, src: src, ledger: led, now: now, start: 1})
			acks := make([]ackMsg, 0, 100)
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				acks = pullAcks(m, 100, now, acks[:0])
				if len(acks) == 0 {
					b.Fatalf("stuck after %d of %d", done, b.N)
				}
				done += len(acks)
				m.Acks(acks, now)
			}
		})
	}
}

// pullAcks pulls batch messages from m at once (no_wait) and appends to
// acks a plain ack of each delivered one, as a fetching worker would.
func pullAcks(m *machine, batch int, now time.Time, acks []ackMsg) []ackMsg {
	a := m.Pull("in", []byte(`{"batch":`+strconv.Itoa(batch)+`,"no_wait":true}`), now)
	for _, o := range a.out {
		if o.deliver {
			seq, _ := parseAckSubject(o.reply)
			acks = append(acks, ackMsg{seq: seq, kind: ackAck})
		}
	}
	return acks
}
