package jetstream

import (
	"testing"
)

// BenchmarkAPIResponse is one API request handled and answered, through
// the handler and the one writer of responses: an info, a lookup that
// fails, and a list.
//
//	go test ./server/jetstream -run '^$' -bench APIResponse
func BenchmarkAPIResponse(b *testing.B) {
	core := newFakeCore()
	svc := startService(b, core)
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.S", reply: "_INBOX.mk", body: []byte(`{"name":"S","subjects":["s.>"]}`)})
	svc.handle(apiRequest{subject: apiPrefix + "CONSUMER.CREATE.S.C", reply: "_INBOX.mk", body: []byte(`{"stream_name":"S","config":{"durable_name":"C","ack_policy":"explicit"}}`)})
	if svc.stream("S") == nil || svc.stream("S").consumer("C") == nil {
		b.Fatal("stream S or consumer C not created")
	}
	for _, bc := range []struct{ name, subject, body string }{
		{"stream-info", "STREAM.INFO.S", ""},
		{"consumer-info", "CONSUMER.INFO.S.C", ""},
		{"not-found", "CONSUMER.INFO.S.NOPE", ""},
		{"names", "STREAM.NAMES", "{}"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := apiRequest{subject: apiPrefix + bc.subject, reply: "_INBOX.bench", body: []byte(bc.body)}
			b.ReportAllocs()
			for b.Loop() {
				svc.handle(r)
				core.mu.Lock()
				core.sent = core.sent[:0]
				core.mu.Unlock()
			}
		})
	}
}
