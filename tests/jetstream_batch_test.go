package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// rawAck is a publish reply as both servers send it, decoded so that key
// order and absent zero fields do not count.
type rawAck struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	Batch     string `json:"batch"`
	Count     int    `json:"count"`
	Val       string `json:"val"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

// rawPublish publishes with headers (kv: names and values in turn) as a
// request and describes the reply: empty, an ack or an error.
func rawPublish(nc *nats.Conn, subject, data string, kv ...string) string {
	m := nats.NewMsg(subject)
	m.Data = []byte(data)
	for i := 0; i+1 < len(kv); i += 2 {
		m.Header.Add(kv[i], kv[i+1])
	}
	r, err := nc.RequestMsg(m, 5*time.Second)
	if err != nil {
		return "request: " + err.Error()
	}
	if len(r.Data) == 0 {
		return "empty reply"
	}
	var a rawAck
	if err := json.Unmarshal(r.Data, &a); err != nil {
		return fmt.Sprintf("bad reply %q", r.Data)
	}
	if a.Error != nil {
		return fmt.Sprintf("error %d %d %s", a.Error.Code, a.Error.ErrCode, a.Error.Description)
	}
	return fmt.Sprintf("ack stream=%s seq=%d dup=%v batch=%q count=%d val=%q", a.Stream, a.Seq, a.Duplicate, a.Batch, a.Count, a.Val)
}

// storedMsgs describes every message a stream holds: seq, subject, data
// and the headers named.
func storedMsgs(t *testing.T, js jetstream.JetStream, stream string, headers ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "stream: " + err.Error()
	}
	info, err := s.Info(ctx)
	if err != nil {
		return "info: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "msgs=%d last=%d;", info.State.Msgs, info.State.LastSeq)
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			fmt.Fprintf(&b, " %d: %v;", seq, err)
			continue
		}
		fmt.Fprintf(&b, " %d %s %q", seq, m.Subject, m.Data)
		for _, h := range headers {
			if v := m.Header.Get(h); v != "" {
				fmt.Fprintf(&b, " %s=%s", h, v)
			}
		}
		b.WriteString(";")
	}
	return b.String()
}

// batchScenario runs atomic batch publishes against url: commits, the
// intermediate replies, each way of abandoning a batch, and what was
// stored.
func batchScenario(t *testing.T, url string) []string {
	t.Helper()
	js, ctx := scenarioJS(t, url, 30*time.Second)
	nc := connect(t, url)
	var out []string
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true, AllowRollup: true},
		{Name: "PLAIN", Subjects: []string{"plain.>"}},
		{Name: "MB", Mirror: &jetstream.StreamSource{Name: "B"}, AllowAtomicPublish: true},
		{Name: "MBF", Mirror: &jetstream.StreamSource{Name: "B"}, AllowBatchPublish: true},
	} {
		_, o := createOutcome(ctx, js, cfg)
		out = append(out, o)
	}
	pub := func(what, subject, data string, kv ...string) {
		out = append(out, what+": "+rawPublish(nc, subject, data, kv...))
	}
	id, seq, commit := "Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit"

	pub("not allowed", "plain.a", "x", id, "p1", seq, "1")
	pub("one", "b.a", "1", id, "ok", seq, "1")
	pub("two", "b.b", "2", id, "ok", seq, "2", "Nats-Msg-Id", "m2")
	pub("commit", "b.c", "3", id, "ok", seq, "3", commit, "1")
	pub("after commit", "b.c", "4", id, "ok", seq, "4", commit, "1")

	pub("eob one", "b.a", "5", id, "eob", seq, "1")
	pub("eob two", "b.b", "6", id, "eob", seq, "2")
	pub("eob commit", "b.z", "ignored", id, "eob", seq, "3", commit, "eob")
	pub("eob alone", "b.a", "x", id, "eob1", seq, "1", commit, "eob")

	pub("gap one", "b.a", "x", id, "gap", seq, "1")
	pub("gap three", "b.a", "x", id, "gap", seq, "3")
	pub("gap gone", "b.a", "x", id, "gap", seq, "2", commit, "1")
	pub("no seq", "b.a", "x", id, "noseq")
	pub("bad seq", "b.a", "x", id, "badseq", seq, "one")
	pub("long id", "b.a", "x", id, strings.Repeat("i", 65), seq, "1")
	pub("id of 64", "b.a", "64", id, strings.Repeat("i", 64), seq, "1", commit, "1")
	pub("unknown", "b.a", "x", id, "unknown", seq, "2")
	pub("too large", "b.a", "x", id, "unknown", seq, "1001")
	pub("bad commit one", "b.a", "x", id, "badc", seq, "1")
	pub("bad commit", "b.a", "x", id, "badc", seq, "2", commit, "yes")
	pub("single", "b.s", "single", id, "single", seq, "1", commit, "1")

	pub("expect first", "b.e", "x", id, "exp", seq, "1", "Nats-Expected-Last-Sequence", "12")
	pub("expect second", "b.e", "y", id, "exp", seq, "2", "Nats-Expected-Last-Sequence", "12", commit, "1")
	pub("expect ok", "b.e", "x", id, "exp2", seq, "1", "Nats-Expected-Last-Sequence", "8", commit, "1")
	pub("expect wrong", "b.e", "x", id, "exp3", seq, "1", "Nats-Expected-Last-Sequence", "3", commit, "1")
	pub("subject seq", "b.f", "x", id, "exps", seq, "1")
	pub("subject seq moved", "b.f", "y", id, "exps", seq, "2", "Nats-Expected-Last-Subject-Sequence", "0", commit, "1")
	pub("subject seq ok", "b.g", "x", id, "exps2", seq, "1", "Nats-Expected-Last-Subject-Sequence", "0", commit, "1")
	pub("last msg id", "b.h", "x", id, "lmid", seq, "1", "Nats-Expected-Last-Msg-Id", "m2", commit, "1")

	pub("dup in store", "b.d", "x", id, "dup", seq, "1", "Nats-Msg-Id", "m2", commit, "1")
	pub("dup within one", "b.d", "x", id, "dup2", seq, "1", "Nats-Msg-Id", "same")
	pub("dup within", "b.d", "y", id, "dup2", seq, "2", "Nats-Msg-Id", "same", commit, "1")
	pub("dup plain after", "b.d", "z", "Nats-Msg-Id", "same")

	pub("rollup all second one", "b.r", "x", id, "ra", seq, "1")
	pub("rollup all second", "b.r", "y", id, "ra", seq, "2", "Nats-Rollup", "all", commit, "1")
	pub("rollup sub", "b.a", "rolled", id, "rs", seq, "1", "Nats-Rollup", "sub", commit, "1")
	pub("ttl", "b.t", "x", id, "ttl", seq, "1", "Nats-TTL", "5s", commit, "1")
	pub("api level", "b.l", "x", id, "lvl", seq, "1", "Nats-Required-Api-Level", "99")
	pub("api level gone", "b.l", "x", id, "lvl", seq, "2", commit, "1")
	pub("plain after", "b.p", "plain")

	out = append(out, "stored: "+storedMsgs(t, js, "B", "Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit", "Nats-Rollup"))
	return out
}

func TestAtomicBatchMatchesReference(t *testing.T) {
	ref := batchScenario(t, "nats://"+refAddr(startReference(t, true)))
	got := batchScenario(t, busURL(startBus(t, server.Options{JetStream: true})))
	sameOutcomes(t, ref, got)
}

// TestAtomicBatchDroppedAtRestart: a batch staged when the server stops
// is gone after it starts again; its commit is refused and nothing of it
// was stored.
func TestAtomicBatchDroppedAtRestart(t *testing.T) {
	dir := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: dir})
	js, ctx := scenarioJS(t, busURL(s), 20*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}, AllowAtomicPublish: true}); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, busURL(s))
	if got := rawPublish(nc, "b.a", "1", "Nats-Batch-Id", "r", "Nats-Batch-Sequence", "1"); got != "empty reply" {
		t.Fatalf("staged: %s", got)
	}
	nc.Close()
	shutdown(t, s)
	s = startBus(t, server.Options{JetStream: true, StoreDir: dir})
	nc = connect(t, busURL(s))
	if got := rawPublish(nc, "b.b", "2", "Nats-Batch-Id", "r", "Nats-Batch-Sequence", "2", "Nats-Batch-Commit", "1"); !strings.Contains(got, "10176") {
		t.Fatalf("commit after restart: %s", got)
	}
	js2, _ := scenarioJS(t, busURL(s), 10*time.Second)
	if got := storedMsgs(t, js2, "B"); got != "msgs=0 last=0;" {
		t.Fatalf("stored: %s", got)
	}
}
