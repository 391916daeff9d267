package jetstream

import (
	"fmt"
	"testing"

	"github.com/bus-dev/bus/jetlog"
)

// BenchmarkShutdownManySubjects is the service's Shutdown with one file
// stream of n messages, each on its own subject, and three durable
// consumers (subj.>, one subject, unfiltered), as TestScaleSubjects leaves
// bus when it stops it. Most of it is the stream's catalog snapshot,
// which a clean close writes so the next start need not rebuild it.
//
//	go test ./server/jetstream -run '^$' -bench ShutdownManySubjects/200k -benchtime 3x
//	go test ./server/jetstream -run '^$' -bench ShutdownManySubjects/1M -benchtime 1x
func BenchmarkShutdownManySubjects(b *testing.B) {
	for _, n := range []struct {
		name string
		n    int
	}{{"200k", 200_000}, {"1M", 1_000_000}} {
		b.Run(n.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				svc := manySubjectsService(b, n.n)
				b.StartTimer()
				svc.Shutdown()
			}
		})
	}
}

func manySubjectsService(b *testing.B, n int) *Service {
	svc, err := New(newFakeCore(), Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		b.Fatal(err)
	}
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.S", reply: "_INBOX.mk",
		body: []byte(`{"name":"S","subjects":["subj.>"],"storage":"file"}`)})
	st := svc.stream("S")
	if st == nil {
		b.Fatal("stream S not created")
	}
	batch := make([]jetlog.Msg, 1000)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = jetlog.Msg{Subject: fmt.Sprintf("subj.%d", i+j), Data: make([]byte, 64)}
		}
		if _, err := st.log.AppendBatch(batch, jetlog.Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct{ name, filter string }{{"A", "subj.>"}, {"B", fmt.Sprintf("subj.%d", n/2)}, {"C", ""}} {
		svc.handle(apiRequest{subject: apiPrefix + "CONSUMER.CREATE.S." + c.name, reply: "_INBOX.mk",
			body: fmt.Appendf(nil, `{"stream_name":"S","config":{"durable_name":%q,"ack_policy":"explicit","filter_subject":%q}}`, c.name, c.filter)})
		if st.consumer(c.name) == nil {
			b.Fatalf("consumer %s not created", c.name)
		}
	}
	return svc
}
