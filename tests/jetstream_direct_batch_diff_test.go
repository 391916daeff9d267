package tests

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// directGetCase is one raw direct get: the subject's tail after
// $JS.API.DIRECT.GET., its body, a header block (or ""), and whether the
// answer is a stream of messages ended by a status (batch, multi_last)
// rather than one message.
type directGetCase struct {
	tail, body, hdr string
	stream          bool
}

// rawDirectGets sends each case on a raw connection and returns what
// came back, frame by frame, with the stored times left out (each
// server's own) but every other byte of headers and payloads kept.
func rawDirectGets(t *testing.T, addr string, cases []directGetCase) []string {
	t.Helper()
	rc := dialRaw(t, addr)
	rc.send("CONNECT {\"verbose\":false,\"headers\":true,\"no_responders\":true,\"protocol\":1}\r\nSUB _R.* 1\r\nPING\r\n")
	for rc.line() != "PONG\r\n" {
	}
	var out []string
	for i, c := range cases {
		reply := fmt.Sprintf("_R.%d", i)
		subject := "$JS.API.DIRECT.GET." + c.tail
		if c.hdr == "" {
			rc.send(fmt.Sprintf("PUB %s %s %d\r\n%s\r\n", subject, reply, len(c.body), c.body))
		} else {
			rc.send(fmt.Sprintf("HPUB %s %s %d %d\r\n%s%s\r\n", subject, reply, len(c.hdr), len(c.hdr)+len(c.body), c.hdr, c.body))
		}
		for {
			frame, status := readDirectFrame(t, rc)
			out = append(out, fmt.Sprintf("%s %s: %s", c.tail, storedNow.ReplaceAllString(c.body, "<stored>"), frame))
			if status || !c.stream {
				break
			}
		}
	}
	return out
}

var (
	storedTime = regexp.MustCompile(`Nats-Time-Stamp: [^\r]*`)
	// storedNow is a stored message's time in a request body.
	storedNow = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z`)
)

// readDirectFrame reads one MSG or HMSG and describes it; status says it
// carries a status code (an error or the EOB that ends a batch).
func readDirectFrame(t *testing.T, rc *rawConn) (string, bool) {
	t.Helper()
	_, hdr, data := readFrame(t, rc)
	kind := "MSG"
	if hdr != "" {
		kind = "HMSG"
	}
	hdr = storedTime.ReplaceAllString(hdr, "Nats-Time-Stamp: <time>")
	return fmt.Sprintf("%s %q %q", kind, hdr, data), strings.HasPrefix(hdr, "NATS/1.0 ")
}

// readFrame reads one MSG or HMSG (answering the server's pings and
// skipping INFO updates on the way): its subject, header block and
// payload.
func readFrame(t *testing.T, rc *rawConn) (subject, hdr, data string) {
	t.Helper()
	line := strings.Fields(rc.line())
	for len(line) > 0 && (line[0] == "INFO" || line[0] == "PING") {
		if line[0] == "PING" {
			rc.send("PONG\r\n")
		}
		line = strings.Fields(rc.line())
	}
	if len(line) < 4 || line[0] != "MSG" && line[0] != "HMSG" {
		t.Fatalf("unexpected frame %q", line)
	}
	hdrLen := 0
	total, err := strconv.Atoi(line[len(line)-1])
	if err == nil && line[0] == "HMSG" {
		hdrLen, err = strconv.Atoi(line[len(line)-2])
	}
	if err != nil {
		t.Fatalf("frame %q: %v", line, err)
	}
	buf := make([]byte, total+2)
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		t.Fatalf("read frame %q: %v", line, err)
	}
	return line[1], string(buf[:hdrLen]), string(buf[hdrLen:total])
}

// directBatchScenario stores a few messages (one deleted, some with
// headers) in a file and a memory stream, and a stream of many subjects,
// then asks for them in every way ADR-31 allows and several it refuses.
func directBatchScenario(t *testing.T, url, addr string) []string {
	js, ctx := scenarioJS(t, url, 30*time.Second)
	var out []string
	var cases []directGetCase
	for _, k := range []struct {
		name, prefix string
		storage      jetstream.StorageType
	}{{"D", "d", jetstream.FileStorage}, {"DM", "dm", jetstream.MemoryStorage}} {
		st, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: k.name, Subjects: []string{k.prefix + ".>"}, Storage: k.storage, AllowDirect: true})
		out = append(out, o)
		for i, subj := range []string{"a", "b", "a", "c", "b", "a.x", "a"} {
			m := nats.NewMsg(k.prefix + "." + subj)
			m.Data = []byte(strconv.Itoa(i + 1))
			if i%2 == 1 {
				m.Header.Set("X-Kind", "odd")
			}
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.DeleteMsg(ctx, 3); err != nil {
			t.Fatal(err)
		}
		m4, err := st.GetMsg(ctx, 4)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range directCases(m4.Time.UTC().Format(time.RFC3339Nano)) {
			c.tail = k.name + strings.ReplaceAll(strings.TrimPrefix(c.tail, "D"), ".d.", "."+k.prefix+".")
			c.body = strings.ReplaceAll(c.body, `"d.`, `"`+k.prefix+`.`)
			cases = append(cases, c)
		}
	}
	_, o := createOutcome(ctx, js, jetstream.StreamConfig{Name: "M", Subjects: []string{"m.>"}, AllowDirect: true})
	out = append(out, o)
	for i := range 1100 {
		js.PublishAsync(fmt.Sprintf("m.%d", i), nil)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("publishes not acked")
	}
	cases = append(cases,
		directGetCase{tail: "M", body: `{"multi_last":["m.>"]}`, stream: true},
		directGetCase{tail: "M", body: `{"multi_last":["m.>"],"up_to_seq":3}`, stream: true},
		directGetCase{tail: "M", body: `{"multi_last":["m.1","m.2"],"up_to_seq":2000}`, stream: true})
	return append(out, rawDirectGets(t, addr, cases)...)
}

// directCases are the requests asked of stream D (subjects d.>), whose
// fourth message was stored at t4.
func directCases(t4 string) []directGetCase {
	return []directGetCase{
		{tail: "D", body: `{"seq":1}`},
		{tail: "D", body: `{"seq":3}`},
		{tail: "D", body: `{"seq":2,"no_hdr":true}`},
		{tail: "D", body: `{"next_by_subj":"d.a","seq":2}`},
		{tail: "D", body: `{"start_time":"2000-01-01T00:00:00Z"}`},
		{tail: "D", body: `{"start_time":"` + t4 + `"}`},
		{tail: "D", body: `{"seq":1,"batch":3}`, stream: true},
		{tail: "D", body: `{"seq":1,"batch":100}`, stream: true},
		{tail: "D", body: `{"seq":2,"batch":3,"next_by_subj":"d.a"}`, stream: true},
		{tail: "D", body: `{"next_by_subj":"d.*","batch":10}`, stream: true},
		{tail: "D", body: `{"seq":1,"batch":10,"max_bytes":5}`, stream: true},
		{tail: "D", body: `{"seq":1,"batch":10,"max_bytes":-1}`, stream: true},
		{tail: "D", body: `{"seq":1,"batch":2,"no_hdr":true}`, stream: true},
		{tail: "D", body: `{"seq":1,"batch":-1}`, stream: true},
		{tail: "D", body: `{"seq":100,"batch":2}`, stream: true},
		{tail: "D", body: `{"seq":7,"batch":2}`, stream: true},
		{tail: "D", body: `{"start_time":"` + t4 + `","batch":2}`, stream: true},
		{tail: "D", body: `{"start_time":"2100-01-01T00:00:00Z","batch":2}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.a","d.b"]}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.*"]}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.a","d.>"]}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"up_to_seq":4}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"batch":2}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"seq":5}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"max_bytes":3}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"no_hdr":true}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.zz"]}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.a"],"up_to_time":"2000-01-01T00:00:00Z"}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.a"],"up_to_time":"2100-01-01T00:00:00Z"}`, stream: true},
		{tail: "D", body: `{"multi_last":[">"],"up_to_time":"` + t4 + `"}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.>"],"up_to_seq":7,"batch":1}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.>"],"up_to_seq":8,"batch":1}`, stream: true},
		{tail: "D", body: `{"multi_last":["d.>"],"up_to_seq":100}`, stream: true},
		{tail: "D", body: ``},
		{tail: "D", body: `{}`},
		{tail: "D", body: `{bad`},
		{tail: "D", body: `{"batch":2}`},
		{tail: "D", body: `{"seq":1,"last_by_subj":"d.a"}`},
		{tail: "D", body: `{"last_by_subj":"d.a","batch":2}`},
		{tail: "D", body: `{"multi_last":["d.a"],"next_by_subj":"d.a"}`},
		{tail: "D", body: `{"multi_last":["d.a"],"last_by_subj":"d.a"}`},
		{tail: "D", body: `{"multi_last":["d.a"],"up_to_seq":3,"up_to_time":"2000-01-01T00:00:00Z"}`},
		{tail: "D", body: `{"seq":1,"start_time":"2000-01-01T00:00:00Z"}`},
		{tail: "D", body: `{"seq":1}`, hdr: "NATS/1.0\r\nNats-Required-Api-Level: 99\r\n\r\n"},
		{tail: "D", body: `{"seq":1}`, hdr: "NATS/1.0\r\nNats-Required-Api-Level: 1\r\n\r\n"},
		{tail: "D.d.a", body: ``},
		{tail: "D.d.a", body: `{"no_hdr":true}`},
		{tail: "D.d.b", body: `{"max_bytes":1}`},
		{tail: "D.d.zz", body: ``},
		{tail: "D.d.a", body: `{"batch":2}`},
		{tail: "D.d.a", body: `{"seq":1}`},
		{tail: "D.d.a", body: `{bad`},
	}
}

// TestDirectGetBatchMatchesReference: batch and multi_last direct gets
// (ADR-31) answer byte for byte as the reference's, times aside, in
// their messages, their Nats-Num-Pending and Nats-Last-Sequence, the
// EOB that ends them and the statuses that refuse them. Issue 28.
func TestDirectGetBatchMatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReference(t, true)
	want := directBatchScenario(t, "nats://"+refAddr(ref), refAddr(ref))
	s := startBus(t, server.Options{JetStream: true})
	sameOutcomes(t, want, directBatchScenario(t, busURL(s), s.Addr().String()))
}
