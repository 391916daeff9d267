package jetstream

import (
	"strings"
	"testing"
)

// FuzzJetStreamAPI sends arbitrary subjects and bodies to the JetStream
// API: no input may panic it, and it must keep answering afterwards.
func FuzzJetStreamAPI(f *testing.F) {
	seeds := []struct{ subject, body string }{
		{"INFO", ""},
		{"STREAM.CREATE.X", `{"name":"X","subjects":["x.>"]}`},
		{"STREAM.CREATE.X", `{"name":"X","subjects":["x.>"],"max_age":-5,"duplicate_window":1}`},
		{"STREAM.UPDATE.X", `{"name":"X","subjects":["x.>","y"],"max_msgs":3}`},
		{"STREAM.PURGE.X", `{"filter":"x.a","keep":1,"seq":2}`},
		{"STREAM.MSG.GET.X", `{"seq":1}`},
		{"STREAM.MSG.GET.X", `{"last_by_subj":"x.*"}`},
		{"STREAM.MSG.DELETE.X", `{"seq":18446744073709551615}`},
		{"STREAM.LIST", `{"offset":-1}`},
		{"STREAM.NAMES", `{"subject":"x.>","offset":99}`},
		{"DIRECT.GET.X.x.a", ""},
		{"STREAM.CREATE.X", `{"name":"X","subjects":["x.>"],"allow_direct":true,"allow_batched":true,"metadata":{"_nats.level":"9"}}`},
		{"DIRECT.GET.X", `{"seq":1,"batch":5,"max_bytes":10,"no_hdr":true}`},
		{"DIRECT.GET.X", `{"multi_last":["x.*",">"],"up_to_time":"2000-01-01T00:00:00Z","seq":2}`},
		{"DIRECT.GET.X", `{"next_by_subj":"x.>","start_time":"2100-01-01T00:00:00Z","batch":-1}`},
		{"CONSUMER.CREATE.X.C", `{"stream_name":"X","config":{"durable_name":"C","ack_policy":"explicit","backoff":[1,2],"max_deliver":1}}`},
		{"CONSUMER.CREATE.X.C.x.>", `{"stream_name":"X","config":{"name":"C","filter_subject":"x.>","deliver_policy":"by_start_time"}}`},
		{"CONSUMER.CREATE.X.P", `{"stream_name":"X","config":{"durable_name":"P","deliver_subject":"d","flow_control":true,"idle_heartbeat":1}}`},
		{"CONSUMER.INFO.X.C", ""},
		{"CONSUMER.LIST.X", "{}"},
		{"CONSUMER.DELETE.X.C", ""},
		{"STREAM.SNAPSHOT.X", `{"deliver_subject":"snap","chunk_size":1,"window_size":-1}`},
		{"STREAM.RESTORE.Y", `{"config":{"name":"Y","subjects":["y.>"]}}`},
		{"STREAM.DELETE.X", ""},
	}
	for _, s := range seeds {
		f.Add(s.subject, s.body)
	}
	core := newFakeCore()
	svc := startService(f, core)
	f.Fuzz(func(t *testing.T, subject, body string) {
		if strings.ContainsAny(subject, " \t\r\n") {
			return // cannot arrive in a PUB
		}
		svc.handle(apiRequest{subject: apiPrefix + subject, reply: "_INBOX.fuzz", body: []byte(body)})
		// Keep the store small, so that runs (and their cleanup) stay fast
		// however many streams the inputs create.
		if streams := svc.sortedStreams(); len(streams) > 4 {
			for _, st := range streams[4:] {
				svc.handle(apiRequest{subject: apiPrefix + "STREAM.DELETE." + st.name})
			}
		}
	})
}
