package jetstream

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The wire side of external mirrors and sources (sourceexternal.go): the
// consumer an external sourcer asks the origin's JetStream API for, what
// it learns from the deliveries' $JS.ACK reply subjects, and the queue
// that hands deliveries from the core's handler to the sourcer. The
// shapes are nats-server 2.15.2's, so either server can be the origin.

// externalStream is a mirror's or source's `external`: the API prefix
// that reaches the origin's JetStream (e.g. $JS.hub.API) and, optionally,
// the prefix of the subject its deliveries come back on.
type externalStream struct {
	API     string `json:"api"`
	Deliver string `json:"deliver"`
}

// Timings of an external sourcer, the reference's: the consumer beats
// every second while idle and goes away after 10s without us; a create
// unanswered for 30s is given up.
const (
	externalHeartbeat = time.Second
	externalInactive  = 10 * time.Second
	externalAckWait   = 22 * time.Hour
	externalCreate    = 30 * time.Second
	// externalStalled is how long silence (no message, no heartbeat)
	// means the consumer or the way to it is gone: three missed beats.
	externalStalled = 3 * externalHeartbeat
	externalMaxWait = 2 * time.Minute // the longest back-off
)

// consumerRequest is the body of <api>.CONSUMER.CREATE.<stream>…; its
// config carries the fields the reference's sourcing consumer sets.
type consumerRequest struct {
	Stream string         `json:"stream_name"`
	Config sourcingConfig `json:"config"`
	Action string         `json:"action"`
}

type sourcingConfig struct {
	Name              string            `json:"name"`
	DeliverPolicy     string            `json:"deliver_policy"`
	OptStartSeq       uint64            `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time        `json:"opt_start_time,omitempty"`
	AckPolicy         string            `json:"ack_policy"`
	AckWait           int64             `json:"ack_wait"`
	MaxDeliver        int               `json:"max_deliver"`
	FilterSubject     string            `json:"filter_subject,omitempty"`
	FilterSubjects    []string          `json:"filter_subjects,omitempty"`
	ReplayPolicy      string            `json:"replay_policy"`
	DeliverSubject    string            `json:"deliver_subject"`
	FlowControl       bool              `json:"flow_control"`
	Heartbeat         int64             `json:"idle_heartbeat"`
	InactiveThreshold int64             `json:"inactive_threshold"`
	Replicas          int               `json:"num_replicas"`
	Direct            bool              `json:"direct,omitempty"`
	Sourcing          bool              `json:"sourcing,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
}

// consumerResponse is what of a create response the sourcer reads.
type consumerResponse struct {
	// identity is the origin stream's, when its API names it in the
	// Nats-Stream-Identity header (the reference does).
	identity  string
	Error     *apiError `json:"error"`
	Name      string    `json:"name"`
	Delivered struct {
		Consumer uint64 `json:"consumer_seq"`
		Stream   uint64 `json:"stream_seq"`
	} `json:"delivered"`
	// Config is read for a durable source's consumer, which must ack by
	// flow control (sourcedurable.go).
	Config struct {
		AckPolicy string `json:"ack_policy"`
	} `json:"config"`
}

// createSubject is where the request goes: the extended form naming the
// consumer and its one filter when there is one, as the reference sends.
func (r *consumerRequest) createSubject(api string) string {
	subj := api + ".CONSUMER.CREATE." + r.Stream
	if f := r.Config.FilterSubject; f != "" {
		subj += "." + r.Config.Name + "." + f
	}
	return strings.ReplaceAll(subj, "..", ".")
}

// tokenHash is the reference's short hash of a name (8 characters of
// 0-9A-Za-z from its SHA-256), which it puts in the index name of an
// external source and in the names of sourcing consumers.
func tokenHash(s string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(s))
	var b [8]byte
	for i := range b {
		b[i] = digits[int(sum[i]%62)]
	}
	return string(b[:])
}

// randomToken is a fresh subject token for deliver and reply subjects.
func randomToken() string {
	return strconv.FormatUint(rand.Uint64(), 36)
}

// ackInfo is what a delivery's $JS.ACK reply subject says:
// $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.<pending>,
// or the longer form with a domain and an account hash after ACK.
type ackInfo struct {
	consumer             string
	delivered, seq, dseq uint64
	pending              uint64
	ts                   int64 // when the origin stored it, unix ns
	ok                   bool
}

func parseAckReply(reply string) ackInfo {
	tokens := strings.Split(reply, ".")
	if len(tokens) < 2 || tokens[0] != "$JS" || tokens[1] != "ACK" {
		return ackInfo{}
	}
	off := 2
	switch {
	case len(tokens) == 9:
	case len(tokens) >= 11:
		off = 4
	default:
		return ackInfo{}
	}
	num := func(i int) uint64 {
		n, _ := strconv.ParseUint(tokens[off+i], 10, 64)
		return n
	}
	ts, _ := strconv.ParseInt(tokens[off+5], 10, 64)
	return ackInfo{consumer: tokens[off+1], delivered: num(2), seq: num(3), dseq: num(4), ts: ts, pending: num(6), ok: true}
}

// isControl reports whether a delivery is a status 100 message: an idle
// heartbeat, or a flow-control request when it has a reply.
func isControl(hdr, data []byte) bool {
	return len(data) == 0 && bytes.HasPrefix(hdr, []byte("NATS/1.0 100 "))
}

// flowControlReply is the answer to a flow-control request: where the
// sourcer stands, as the reference's sourcing answers it.
func flowControlReply(dseq, sseq uint64) []byte {
	return statusHeader("",
		"Nats-Last-Consumer", strconv.FormatUint(dseq, 10),
		"Nats-Last-Stream", strconv.FormatUint(sseq, 10))
}

// delivery is one message on the deliver subject, copied.
type delivery struct {
	subject, reply string
	hdr, data      []byte
}

// inbox hands deliveries from the core's handler (any goroutine, which
// must not block) to the sourcer's goroutine. It holds what the origin
// sent before the sourcer got to it: at most a flow-control window,
// because the origin waits for the sourcer's answer to go on.
type inbox struct {
	kick   chan struct{} // capacity 1: something was queued
	mu     sync.Mutex    // guards queued
	queued []delivery
}

func newInbox() *inbox { return &inbox{kick: make(chan struct{}, 1)} }

// put is a Handler: it copies the message and queues it.
func (in *inbox) put(subject, reply []byte, hdr int, msg []byte) bool {
	d := delivery{subject: string(subject), reply: string(reply)}
	buf := append([]byte(nil), msg...)
	if hdr >= 0 {
		d.hdr, d.data = buf[:hdr:hdr], buf[hdr:]
	} else {
		d.data = buf
	}
	in.mu.Lock()
	in.queued = append(in.queued, d)
	in.mu.Unlock()
	select {
	case in.kick <- struct{}{}:
	default:
	}
	return true
}

// take returns everything queued; the caller owns it.
func (in *inbox) take() []delivery {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := in.queued
	in.queued = nil
	return out
}

// responseBox keeps the first create response on a reply subject.
type responseBox chan consumerResponse

func (rb responseBox) put(_, _ []byte, hdr int, msg []byte) bool {
	var ident string
	if hdr > 0 {
		ident, _ = headerValue(msg[:hdr], "Nats-Stream-Identity")
		msg = msg[hdr:]
	}
	var r consumerResponse
	if err := json.Unmarshal(msg, &r); err != nil {
		r = consumerResponse{Error: errInvalidJSON(err)}
	}
	r.identity = ident
	select {
	case rb <- r:
	default:
	}
	return true
}
