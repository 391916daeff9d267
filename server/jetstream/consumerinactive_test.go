package jetstream

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowDeliveryCore is a fakeCore whose clock jumps on each delivery to
// slowInbox: the deliveries of a step go out long after the step's own
// time, as they do when the step read a cold section of the stream.
type slowDeliveryCore struct {
	*fakeCore
	slowInbox string
	jump      time.Duration

	mu  sync.Mutex // guards now
	now time.Time
}

func (c *slowDeliveryCore) clock() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *slowDeliveryCore) Deliver(inbox, subject, reply string, hdr, data []byte) int {
	if inbox == c.slowInbox {
		c.mu.Lock()
		c.now = c.now.Add(c.jump)
		c.mu.Unlock()
	}
	return c.fakeCore.Deliver(inbox, subject, reply, hdr, data)
}

// A pull whose deliveries go out longer after its step than the
// consumer's inactive_threshold leaves the consumer there for the
// client's next pull (issue 30: at 1 M subjects the first read of a
// subj.> consumer took 5.5 s against the ephemeral default of 5 s, the
// consumer removed itself the moment its deliveries were out, and the
// next pull got no responders). The driver tells the machine when the
// deliveries went out (machine.Delivered), and the threshold counts
// from there.
func TestConsumerSlowDeliveryKeepsConsumer(t *testing.T) {
	t.Parallel()
	core := &slowDeliveryCore{fakeCore: newFakeCore(), slowInbox: "in.slow", jump: 6 * time.Second,
		now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	svc, err := New(core, Options{Dir: t.TempDir(), Now: core.clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Shutdown)

	request(svc, "STREAM.CREATE.S", "r.stream", `{"name":"S","subjects":["s.>"]}`)
	if r := awaitAnswer(t, core.fakeCore, "r.stream"); r.Error != nil {
		t.Fatalf("stream create: %+v", r.Error)
	}
	publishAcked(t, core.fakeCore, "s.a")
	request(svc, "CONSUMER.CREATE.S.E", "r.consumer",
		`{"stream_name":"S","config":{"name":"E","ack_policy":"none","inactive_threshold":5000000000}}`)
	if r := awaitAnswer(t, core.fakeCore, "r.consumer"); r.Error != nil {
		t.Fatalf("consumer create: %+v", r.Error)
	}

	const next = apiPrefix + "CONSUMER.MSG.NEXT.S.E"
	if n := core.Publish(next, "in.slow", nil, []byte(`{"batch":1,"expires":9000000000}`)); n != 1 {
		t.Fatalf("first pull: %d responders", n)
	}
	awaitSent(t, core.fakeCore, "in.slow", func(m fakeMsg) bool { return m.subject == "s.a" })

	// The next pull, as the client sends it once it has its messages:
	// answered (404, the stream has nothing more), not unheard.
	if n := core.Publish(next, "in.next", nil, []byte(`{"batch":1,"no_wait":true}`)); n != 1 {
		t.Fatalf("pull after a slow delivery: %d responders, want the consumer", n)
	}
	awaitSent(t, core.fakeCore, "in.next", func(m fakeMsg) bool { return bytes.Contains(m.hdr, []byte("404 No Messages")) })
}

// awaitSent polls for a message sent to inbox that matches.
func awaitSent(t *testing.T, core *fakeCore, inbox string, match func(fakeMsg) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		core.mu.Lock()
		var seen []string
		found := false
		for _, m := range core.sent {
			if m.to == inbox {
				seen = append(seen, m.subject+" "+string(m.hdr))
				found = found || match(m)
			}
		}
		core.mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing expected on %s; got %s", inbox, strings.Join(seen, "; "))
		}
		time.Sleep(time.Millisecond) // polling the consumer's goroutine
	}
}
