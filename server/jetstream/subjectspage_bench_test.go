package jetstream

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// BenchmarkStreamInfoSubjectPages pages STREAM.INFO's subjects_filter
// over a stream of n distinct subjects as "nats stream subjects" does:
// offset 0, then the offset of the next page, until total is reached.
// One op is the whole walk; ms/page is what one page costs.
//
//	go test ./server/jetstream -run '^$' -bench StreamInfoSubjectPages/100k
//	go test ./server/jetstream -run '^$' -bench StreamInfoSubjectPages/1M -benchtime 1x
func BenchmarkStreamInfoSubjectPages(b *testing.B) {
	for _, n := range []struct {
		name string
		n    int
	}{{"100k", 100_000}, {"1M", 1_000_000}} {
		b.Run(n.name, func(b *testing.B) {
			core := newFakeCore()
			svc := startService(b, core)
			svc.handle(apiRequest{subject: apiPrefix + "STREAM.CREATE.S", reply: "_INBOX.mk",
				body: []byte(`{"name":"S","subjects":["subj.>"],"storage":"file"}`)})
			st := svc.stream("S")
			if st == nil {
				b.Fatal("stream S not created")
			}
			batch := make([]jetlog.Msg, 1000)
			for i := 0; i < n.n; i += len(batch) {
				for j := range batch {
					batch[j] = jetlog.Msg{Subject: fmt.Sprintf("subj.%d", i+j), Data: make([]byte, 16)}
				}
				if _, err := st.log.AppendBatch(batch, jetlog.Expect{}); err != nil {
					b.Fatal(err)
				}
			}
			pages := 0
			var elapsed time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				seen := 0
				for offset := 0; ; {
					total, got := infoPage(b, svc, core, offset)
					pages++
					seen += got
					offset += got
					if got == 0 || offset >= total {
						break
					}
				}
				elapsed += time.Since(start)
				if seen != n.n {
					b.Fatalf("paged %d subjects, want %d", seen, n.n)
				}
			}
			b.ReportMetric(float64(elapsed.Milliseconds())/float64(pages), "ms/page")
		})
	}
}

// infoPage asks for one page of subjects_filter "subj.>" from offset and
// returns the answer's total and the number of subjects on the page.
func infoPage(b *testing.B, svc *Service, core *fakeCore, offset int) (total, got int) {
	svc.handle(apiRequest{subject: apiPrefix + "STREAM.INFO.S", reply: "_INBOX.bench",
		body: fmt.Appendf(nil, `{"subjects_filter":"subj.>","offset":%d}`, offset)})
	core.mu.Lock()
	sent := core.sent
	core.sent = nil
	core.mu.Unlock()
	var answers []fakeMsg
	for _, m := range sent {
		if m.to == "_INBOX.bench" {
			answers = append(answers, m)
		}
	}
	if len(answers) != 1 {
		b.Fatalf("%d answers, want 1", len(answers))
	}
	var resp struct {
		Total int `json:"total"`
		State struct {
			Subjects map[string]uint64 `json:"subjects"`
		} `json:"state"`
	}
	if err := json.Unmarshal(answers[0].data, &resp); err != nil {
		b.Fatal(err)
	}
	return resp.Total, len(resp.State.Subjects)
}
