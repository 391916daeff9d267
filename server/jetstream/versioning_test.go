package jetstream

import (
	"strings"
	"testing"
)

// A stream or consumer stored before bus kept API levels (no
// _nats.req.level) is the same as a request for it now: creating it
// again answers with it, as the reference compares without the level.
func TestCreateAgainMatchesConfigStoredWithoutLevel(t *testing.T) {
	t.Parallel()
	svc, core := batchServiceWith(t, BatchLimits{}, `{"name":"B","subjects":["b.>"]}`)
	st := svc.stream("B")
	consumer := `{"stream_name":"B","config":{"durable_name":"C","ack_policy":"explicit"}}`
	svc.handle(apiRequest{subject: apiPrefix + "CONSUMER.CREATE.B.C", reply: "_INBOX.c1", body: []byte(consumer)})
	c := st.consumer("C")
	if c == nil {
		t.Fatal("consumer C not created")
	}
	st.mu.Lock()
	st.cfg.Metadata = nil // as stored before
	st.mu.Unlock()
	c.cfg.Metadata = nil
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.B", reply: "_INBOX.s2", body: []byte(`{"name":"B","subjects":["b.>"]}`)})
	svc.handle(apiRequest{subject: apiPrefix + "CONSUMER.CREATE.B.C", reply: "_INBOX.c2",
		body: []byte(`{"stream_name":"B","action":"create","config":{"durable_name":"C","ack_policy":"explicit"}}`)})
	for _, inbox := range []string{"_INBOX.s2", "_INBOX.c2"} {
		got := sentTo(core, inbox)
		if len(got) != 1 || strings.Contains(string(got[0]), `"error"`) {
			t.Fatalf("%s: %s", inbox, got)
		}
	}
}
