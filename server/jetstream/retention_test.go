package jetstream

import (
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// A work-queue message its consumer acked, whose delete did not land
// (as after a crash between the ack and the delete's commit), is deleted
// by the sweep a restart runs; what was not acked stays.
func TestSweepRetainedDeletesWhatWasAcked(t *testing.T) {
	svc, core, _ := startStalled(t, "none", Options{})
	request(svc, "STREAM.CREATE.WQ", "r.create", `{"name":"WQ","subjects":["wq"],"retention":"workqueue"}`)
	if r := awaitAnswer(t, core, "r.create"); r.Error != nil {
		t.Fatal(r.Error)
	}
	st := svc.stream("WQ")
	for range 5 {
		core.Publish("wq", "", nil, []byte("job"))
	}
	waitMsgs := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for st.log.State().Msgs != want {
			if time.Now().After(deadline) {
				t.Fatalf("stream holds %d messages, want %d", st.log.State().Msgs, want)
			}
			time.Sleep(time.Millisecond) // a poll: appends and deletes are asynchronous
		}
	}
	waitMsgs(5)
	request(svc, "CONSUMER.CREATE.WQ.W", "r.consumer", `{"stream_name":"WQ","config":{"durable_name":"W","ack_policy":"explicit"}}`)
	if r := awaitAnswer(t, core, "r.consumer"); r.Error != nil {
		t.Fatal(r.Error)
	}
	// Acks recorded without their retention, as a crash would leave them.
	c := st.consumer("W")
	if err := c.ledger.Update(func(s *jetlog.ConsumerState) {
		for seq := uint64(1); seq <= 3; seq++ {
			s.Deliver(seq)
			s.Ack(seq)
		}
	}, true); err != nil {
		t.Fatal(err)
	}
	waitMsgs(5)
	st.sweepRetained()
	waitMsgs(2)
	if first := st.log.State().FirstSeq; first != 4 {
		t.Fatalf("first seq %d after the sweep, want 4", first)
	}
}
