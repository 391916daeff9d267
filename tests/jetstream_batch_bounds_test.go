package tests

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// The bytes staged for open atomic batches are bounded (security issue
// #22, route 8): per stream by its max_bytes, in all by
// JetStreamBatchLimits.MaxStagedBytes. The reference stages a file
// stream's batches on disk and has no such bound, so these refusals are
// bus's own; their codes and texts are the reference's batch errors.

// refError is how rawPublish describes the reference's error e.
func refError(e *natsserver.ApiError) string {
	return fmt.Sprintf("error %d %d %s", e.Code, e.ErrCode, e.Description)
}

// stageUntilRefused publishes batch id's messages of size bytes to
// subject, uncommitted, until one is refused (or max are staged), and
// returns how many were staged and the refusal.
func stageUntilRefused(nc *nats.Conn, subject, id string, size, max int) (int, string) {
	data := strings.Repeat("x", size)
	for seq := 1; seq <= max; seq++ {
		got := rawPublish(nc, subject, data, "Nats-Batch-Id", id, "Nats-Batch-Sequence", strconv.Itoa(seq))
		if got != "empty reply" {
			return seq - 1, got
		}
	}
	return max, ""
}

// commitBatch publishes a whole batch of n messages and returns the
// commit's reply.
func commitBatch(nc *nats.Conn, subject, id string, n int) string {
	for seq := 1; seq < n; seq++ {
		if got := rawPublish(nc, subject, "m", "Nats-Batch-Id", id, "Nats-Batch-Sequence", strconv.Itoa(seq)); got != "empty reply" {
			return fmt.Sprintf("seq %d: %s", seq, got)
		}
	}
	return rawPublish(nc, subject, "m", "Nats-Batch-Id", id, "Nats-Batch-Sequence", strconv.Itoa(n), "Nats-Batch-Commit", "1")
}

// A batch that stays inside max_bytes is staged and committed as the
// reference does it.
func TestAtomicBatchInsideMaxBytesMatchesReference(t *testing.T) {
	t.Parallel()
	scenario := func(url string) []string {
		js, ctx := scenarioJS(t, url, 20*time.Second)
		_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true, MaxBytes: 10 << 10})
		nc := connect(t, url)
		n, refused := stageUntilRefused(nc, "b.x", "fits", 1000, 5)
		commit := rawPublish(nc, "b.x", "last", "Nats-Batch-Id", "fits", "Nats-Batch-Sequence", "6", "Nats-Batch-Commit", "1")
		return []string{o, fmt.Sprintf("staged %d %q", n, refused), "commit: " + commit}
	}
	ref := scenario("nats://" + refAddr(startReference(t, true)))
	got := scenario(busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// A batch that would stage more than its stream's max_bytes is refused
// as too large and abandoned; its bytes are given back, so the next
// batch fits again, and so does one after a batch abandoned by timeout.
func TestAtomicBatchStagingBoundedByMaxBytes(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamBatchLimits: server.JetStreamBatchLimits{Timeout: time.Second}})
	js, ctx := scenarioJS(t, busURL(s), 20*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true, MaxBytes: 10 << 10}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	n, refused := stageUntilRefused(nc, "b.x", "big", 1000, 20)
	if want := refError(natsserver.NewJSAtomicPublishTooLargeBatchError(10 << 10)); refused != want || n < 9 || n > 10 {
		t.Fatalf("staged %d, then %s; want at most 10 KiB staged, then %s", n, refused, want)
	}
	if got := rawPublish(nc, "b.x", "y", "Nats-Batch-Id", "big", "Nats-Batch-Sequence", strconv.Itoa(n+2)); got != refError(natsserver.NewJSAtomicPublishIncompleteBatchError()) {
		t.Fatalf("refused batch still open: %s", got)
	}
	// Two batches of half of max_bytes each fit; a third does not, as
	// long as the others hold their bytes.
	if n, refused := stageUntilRefused(nc, "b.x", "half1", 1000, 4); n != 4 {
		t.Fatalf("half1 staged %d: %s", n, refused)
	}
	if n, refused := stageUntilRefused(nc, "b.x", "half2", 1000, 4); n != 4 {
		t.Fatalf("half2 staged %d: %s", n, refused)
	}
	if _, refused := stageUntilRefused(nc, "b.x", "third", 1000, 4); refused != refError(natsserver.NewJSAtomicPublishTooManyInflightError()) {
		t.Fatalf("third batch: %s", refused)
	}
	// Abandoned by timeout, they give their bytes back.
	sub, err := nc.SubscribeSync("$JS.EVENT.ADVISORY.STREAM.BATCH_ABANDONED.B")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := sub.NextMsg(5 * time.Second); err != nil {
			t.Fatalf("abandoned by timeout: %v", err)
		}
	}
	if n, refused := stageUntilRefused(nc, "b.x", "again", 1000, 9); n != 9 {
		t.Fatalf("after the timeout staged %d: %s", n, refused)
	}
	if got := rawPublish(nc, "b.x", "z", "Nats-Batch-Id", "again", "Nats-Batch-Sequence", "10", "Nats-Batch-Commit", "eob"); !strings.Contains(got, `count=9`) {
		t.Fatalf("commit after the timeout: %s", got)
	}
}

// The bytes staged in all streams together stop at MaxStagedBytes: a
// batch that alone is larger is too large, one that would fit alone but
// not beside the others is refused as too many in flight, and once the
// others commit, it fits.
func TestAtomicBatchStagingBoundedInTotal(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamBatchLimits: server.JetStreamBatchLimits{MaxStagedBytes: 16 << 10}})
	js, ctx := scenarioJS(t, busURL(s), 20*time.Second)
	for _, name := range []string{"C", "D"} { // no max_bytes
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{strings.ToLower(name) + ".>"}, AllowAtomicPublish: true}); err != nil {
			t.Fatal(err)
		}
	}
	nc := connect(t, busURL(s))
	if n, refused := stageUntilRefused(nc, "c.x", "huge", 1000, 40); refused != refError(natsserver.NewJSAtomicPublishTooLargeBatchError(16<<10)) || n < 15 {
		t.Fatalf("huge batch staged %d, then %s", n, refused)
	}
	if n, refused := stageUntilRefused(nc, "c.x", "a", 1000, 10); n != 10 {
		t.Fatalf("a staged %d: %s", n, refused)
	}
	if n, refused := stageUntilRefused(nc, "d.x", "b", 1000, 10); refused != refError(natsserver.NewJSAtomicPublishTooManyInflightError()) || n < 4 {
		t.Fatalf("b beside a staged %d, then %s", n, refused)
	}
	if got := rawPublish(nc, "c.x", "last", "Nats-Batch-Id", "a", "Nats-Batch-Sequence", "11", "Nats-Batch-Commit", "1"); !strings.Contains(got, "count=11") {
		t.Fatalf("commit a: %s", got)
	}
	if n, refused := stageUntilRefused(nc, "d.x", "b2", 1000, 12); n != 12 {
		t.Fatalf("b2 after a committed staged %d: %s", n, refused)
	}
	if got := commitBatch(nc, "c.x", "small", 3); !strings.Contains(got, "count=3") {
		t.Fatalf("a small batch beside b2: %s", got)
	}
}
