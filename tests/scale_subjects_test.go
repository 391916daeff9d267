package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestScaleSubjects measures one stream of many distinct subjects (issue
// #30): MEASURE_SCALE_SUBJECTS messages (default 1,000,000) of 64 B, each
// on its own subject, then a restart, STREAM.INFO with subjects_filter
// (one subject, and every subject paged as nats.go pages it), a consumer
// filtered to one subject (num_pending, create + first message), one
// with 100 filter subjects, then the whole stream through a consumer
// filtered to subj.> and through an unfiltered one, logging RSS at each
// step. A measurement, not a
// check:
//
//	MEASURE_SCALE=1 go test -count=1 -v -timeout 1h -run TestScaleSubjects ./tests
//
// with MEASURE_BUS_BIN and MEASURE_NATS_SERVER_BIN as for TestScaleStream.
func TestScaleSubjects(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	n := envInt(t, "MEASURE_SCALE_SUBJECTS", 1_000_000)
	for _, srv := range scaleServers(t) {
		t.Run(srv.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			defer cancel()
			dir := t.TempDir()
			p, js := startScaleStream(t, ctx, srv, dir, "subj.>")
			data := make([]byte, 64)
			start := time.Now()
			publishAsync(t, js, n, func(i int) *nats.Msg {
				return &nats.Msg{Subject: fmt.Sprintf("subj.%d", i), Data: data}
			})
			t.Logf("publish %d subjects: %.0f msgs/s; RSS %s", n, float64(n)/time.Since(start).Seconds(), p.rss(t))
			p, _, s, took := restartScaleStream(t, ctx, srv, dir, p)
			st := s.CachedInfo().State
			t.Logf("restart until STREAM.INFO answers %v (%d messages, %d subjects); RSS %s, disk %d MB",
				took, st.Msgs, st.NumSubjects, p.rss(t), diskBytes(t, dir)>>20)

			one := fmt.Sprintf("subj.%d", n/2)
			start = time.Now()
			info, err := s.Info(ctx, jetstream.WithSubjectFilter(one))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("STREAM.INFO subjects_filter %s: %v, %d subjects", one, time.Since(start).Round(time.Microsecond), len(info.State.Subjects))
			start = time.Now()
			if info, err = s.Info(ctx, jetstream.WithSubjectFilter("subj.>")); err != nil {
				t.Fatal(err)
			}
			t.Logf("STREAM.INFO subjects_filter subj.> (paged): %v, %d subjects; RSS %s",
				time.Since(start).Round(time.Millisecond), len(info.State.Subjects), p.rss(t))

			filters := make([]string, 100)
			for i := range filters {
				filters[i] = fmt.Sprintf("subj.%d", i*(n/len(filters)))
			}
			for _, f := range [][]string{{one}, filters} {
				start = time.Now()
				cfg := jetstream.ConsumerConfig{FilterSubjects: f, AckPolicy: jetstream.AckNonePolicy}
				if len(f) == 1 {
					cfg = jetstream.ConsumerConfig{FilterSubject: f[0], AckPolicy: jetstream.AckNonePolicy}
				}
				c, err := s.CreateConsumer(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				created := time.Since(start)
				ci, err := c.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				first, got := fetchAll(t, c, len(f), start)
				t.Logf("consumer with %d filter subjects: created %v, num_pending %d, first message %v, %d messages %v; RSS %s",
					len(f), created.Round(time.Microsecond), ci.NumPending, first.Round(time.Microsecond), got,
					time.Since(start).Round(time.Microsecond), p.rss(t))
			}
			// The whole stream through a wildcard filter and through none:
			// a filtered consumer's catch-up against an unfiltered one's.
			for _, filter := range []string{"subj.>", ""} {
				start = time.Now()
				// As a list of one, so the create request's subject carries
				// no wildcard.
				cfg := jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy}
				if filter != "" {
					cfg.FilterSubjects = []string{filter}
				}
				c, err := s.CreateConsumer(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				first, got := fetchAll(t, c, n, start)
				took := time.Since(start)
				t.Logf("consumer filtered to %q: first message %v, all %d messages %v (%.0f msgs/s); RSS %s",
					filter, first.Round(time.Microsecond), got, took.Round(time.Millisecond), float64(got)/took.Seconds(), p.rss(t))
			}
		})
	}
}

// TestScaleDedup measures the duplicate window holding many message ids
// (issue #30): MEASURE_SCALE_DEDUP_IDS messages (default 1,000,000) of
// 64 B on one subject, once without a Nats-Msg-Id and once each with its
// own (22 characters, a nuid's length), all within the default two-minute
// window; RSS after publishing and after a restart, and the restart time.
// The difference between the two modes is what the ids cost. A
// measurement, not a check:
//
//	MEASURE_SCALE=1 go test -count=1 -v -timeout 1h -run TestScaleDedup ./tests
//
// with MEASURE_BUS_BIN and MEASURE_NATS_SERVER_BIN as for TestScaleStream.
func TestScaleDedup(t *testing.T) {
	if os.Getenv("MEASURE_SCALE") == "" {
		t.Skip("set MEASURE_SCALE=1 to measure")
	}
	n := envInt(t, "MEASURE_SCALE_DEDUP_IDS", 1_000_000)
	data := make([]byte, 64)
	for _, srv := range scaleServers(t) {
		for _, ids := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/ids=%v", srv.name, ids), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
				defer cancel()
				dir := t.TempDir()
				p, js := startScaleStream(t, ctx, srv, dir, "dedup.x")
				start := time.Now()
				publishAsync(t, js, n, func(i int) *nats.Msg {
					m := &nats.Msg{Subject: "dedup.x", Data: data}
					if ids {
						m.Header = nats.Header{nats.MsgIdHdr: []string{fmt.Sprintf("dedup-id-%013d", i)}}
					}
					return m
				})
				t.Logf("publish %d (ids %v): %.0f msgs/s; RSS %s", n, ids, float64(n)/time.Since(start).Seconds(), p.rss(t))
				p, js, _, took := restartScaleStream(t, ctx, srv, dir, p)
				t.Logf("restart until STREAM.INFO answers %v; RSS %s", took, p.rss(t))
				if ids { // the window survived the restart: a repeated id is a duplicate
					ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: "dedup.x", Data: data,
						Header: nats.Header{nats.MsgIdHdr: []string{fmt.Sprintf("dedup-id-%013d", n-1)}}})
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("a repeated id after the restart: duplicate %v; RSS %s", ack.Duplicate, p.rss(t))
				}
			})
		}
	}
}

// fetchAll pulls n messages from c in batches of up to 1,000 and returns
// when the first arrived (since start) and how many came. Each pull waits
// at most 9 s, so nats.go asks for no heartbeats: a server busy reading
// its store is slow, not dead, and the pulls go on for up to 10 minutes.
func fetchAll(t *testing.T, c jetstream.Consumer, n int, start time.Time) (time.Duration, int) {
	t.Helper()
	var first time.Duration
	got := 0
	for got < n && time.Since(start) < 10*time.Minute {
		batch, err := c.Fetch(min(n-got, 1000), jetstream.FetchMaxWait(9*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for range batch.Messages() {
			if got++; got == 1 {
				first = time.Since(start)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			t.Fatal(err)
		}
	}
	return first, got
}
