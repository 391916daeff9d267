package jetstream

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/bus-dev/bus/jetlog"
)

// directService is a service on a fake core with stream D (allow_direct)
// holding n messages of size bytes on d.<i>, and max_pending as given.
func directService(t *testing.T, n, size int, maxPending int64) *Service {
	t.Helper()
	svc, err := New(newFakeCore(), Options{Dir: t.TempDir(), MaxPending: maxPending})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Shutdown)
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.D", reply: "_INBOX.mk",
		body: []byte(`{"name":"D","subjects":["d.>"],"allow_direct":true}`)})
	st := svc.stream("D")
	if st == nil {
		t.Fatal("stream D not created")
	}
	for i := range n {
		if _, err := st.log.Append(jetlog.Msg{Subject: fmt.Sprintf("d.%d", i), Data: make([]byte, size)}, jetlog.Expect{}); err != nil {
			t.Fatal(err)
		}
	}
	return svc
}

// received subscribes to inbox on svc's fake core and returns what
// arrives there, headers and payload together.
func received(t *testing.T, svc *Service, inbox string) *[][]byte {
	t.Helper()
	var got [][]byte
	if _, err := svc.sh.core.Subscribe(inbox, func(_, _ []byte, _ int, msg []byte) bool {
		got = append(got, append([]byte(nil), msg...))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return &got
}

// A batch with no max_bytes stops at the server's max_pending, the most
// the requester's connection could hold, and says in its EOB how many
// were left; a multi_last too.
func TestDirectBatchStopsAtMaxPending(t *testing.T) {
	t.Parallel()
	svc := directService(t, 100, 1000, 10_000)
	for i, body := range []string{`{"seq":1,"batch":100}`, `{"multi_last":["d.*"]}`} {
		inbox := fmt.Sprintf("_INBOX.%d", i)
		got := received(t, svc, inbox)
		svc.handle(apiRequest{subject: apiPrefix + "DIRECT.GET.D", reply: inbox, body: []byte(body)})
		// d.0 … d.9 reach 10,030 bytes counted: ten messages, then EOB.
		if len(*got) != 11 || !bytes.HasPrefix((*got)[10], []byte("NATS/1.0 204 EOB\r\nNats-Num-Pending: 90\r\n")) {
			t.Fatalf("%s: %d messages, last %q", body, len(*got), (*got)[len(*got)-1])
		}
	}
}

// A batch whose requester is gone stops at the first message nothing
// received, instead of reading the rest of the stream for no one.
func TestDirectBatchStopsWhenNobodyReceives(t *testing.T) {
	t.Parallel()
	svc := directService(t, 1000, 10, 0)
	core := svc.sh.core.(*fakeCore)
	svc.handle(apiRequest{subject: apiPrefix + "DIRECT.GET.D", reply: "_INBOX.gone", body: []byte(`{"seq":1,"batch":1000}`)})
	if n := len(sentTo(core, "_INBOX.gone")); n != 1 {
		t.Fatalf("%d messages sent to a requester that is gone, want 1", n)
	}
}
