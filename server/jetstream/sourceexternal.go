package jetstream

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// External mirrors and sources: a sourcer whose config names
// external.api reaches its origin through the JetStream API at that
// prefix (this server's own domain, or a server across a link), never
// through the origin's log, so everything it does goes through Core.
//
// As the reference does, it creates on the origin a push consumer with
// ack policy none, flow control and idle heartbeats, starting at the
// origin seq after the last one the target stored, and delivering to a
// fresh subject under external.deliver (or $JS.S / $JS.M). It answers
// flow-control requests and the Nats-Consumer-Stalled of heartbeats. The
// consumer seqs in the deliveries' reply subjects go 1, 2, 3…: a jump,
// a heartbeat naming a consumer seq it has not seen, or silence longer
// than three heartbeats means something was lost, and it creates a new
// consumer from where the target stands. What the target stored is the
// truth (the Nats-Stream-Source header for a source, the last seq for a
// mirror), so neither a lost link, an origin that comes back, nor a
// restart repeats or skips a message.
//
// One goroutine per sourcer (run by runExternal) owns all of this; the
// core's handlers only queue what they get (inbox, responseBox).

// external returns the source's external prefixes, or nil when it reads
// an origin of this server directly.
func (c *sourceConfig) external() *externalStream {
	if e := c.External; e != nil && e.API != "" {
		return e
	}
	if c.Consumer != nil { // a durable source asks even a local origin
		return &externalStream{API: "$JS.API"}
	}
	return nil
}

// checkExternal validates external prefixes as the reference does.
func checkExternal(e *externalStream) *apiError {
	if e == nil {
		return nil
	}
	if e.Deliver != "" && !subjects.ValidLiteral(e.Deliver) {
		return newAPIError(400, 10024, "stream external delivery prefix %s must not contain wildcards", e.Deliver)
	}
	if e.API != "" {
		if !subjects.ValidLiteral(e.API) {
			return errStreamConfig("stream external api prefix %q must be a valid subject without wildcards", e.API)
		}
		if e.API == "$JS.API" {
			return newAPIError(400, 10021, "stream external api prefix %s must not overlap with $JS.API", e.API)
		}
	}
	return nil
}

// link is one consumer on the origin, as the sourcer follows it.
type link struct {
	name     string // the consumer's, as the origin named it
	dseq     uint64 // the last consumer seq taken
	sseq     uint64 // the last origin seq taken
	deliver  any    // Subscription on the deliver subject
	deliverS string
}

// outcome is why a link ended, which decides how soon to try again.
type outcome int

const (
	stopped outcome = iota // the sourcer is closing
	lost                   // a gap or silence: recreate soon
	refused                // the origin said no, or the target did: back off
	unheard                // nobody answers the API prefix: back off, or until someone does
)

func (s *sourcer) runExternal() {
	defer close(s.done)
	fails := 0
	for {
		out, progressed := s.follow()
		if out == stopped {
			return
		}
		if progressed {
			fails = 0
		}
		var wake <-chan struct{}
		wait := sourceRetry
		if out != lost {
			fails++
			wait = min(sourceRetry<<min(fails-1, 8), externalMaxWait)
		}
		if out == unheard {
			// Try again at once if a responder shows up (a client that
			// serves the prefix, or a link that brings it).
			ch := make(chan struct{}, 1)
			cancel := s.target.sh.core.WatchInterest(s.createSubject(), func() {
				select {
				case ch <- struct{}{}:
				default:
				}
			})
			wake = ch
			ok := s.sleep(wait, wake)
			cancel()
			if !ok {
				return
			}
			continue
		}
		if !s.sleep(wait, nil) {
			return
		}
	}
}

// sleep waits d, or until wake, or stop (false).
func (s *sourcer) sleep(d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d + time.Duration(s.target.sh.random()*float64(100*time.Millisecond)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-s.stop:
		return false
	}
	return true
}

// follow creates a consumer on the origin and copies what it delivers
// until it stops making sense; progressed says a consumer was created.
func (s *sourcer) follow() (outcome, bool) {
	core := s.target.sh.core
	req := s.consumerRequest()
	in := newInbox()
	l := &link{deliverS: req.Config.DeliverSubject}
	durable := s.cfg.Consumer != nil
	if durable {
		l.deliverS = s.cfg.Consumer.DeliverSubject
	}
	var err error
	// Listen before asking: the origin starts delivering at once, and a
	// push consumer only delivers while its subject has a listener.
	heard := func(subject, reply []byte, hdr int, msg []byte) bool {
		s.heard.Store(time.Now().UnixNano())
		return in.put(subject, reply, hdr, msg)
	}
	if l.deliver, err = core.Subscribe(l.deliverS, heard); err != nil {
		s.setErr(s.setupError("%v", err))
		return refused, false
	}
	defer core.Unsubscribe(l.deliver)
	if durable {
		return s.followDurable(l, in)
	}
	stable := req.Config.Name
	resp, out := s.create(req)
	if out == refused && s.originRecreated(resp) {
		return lost, false // asked again at once, from the start
	}
	if out == refused && resp.Error != nil && resp.Error.ErrCode != 10059 {
		// An origin that does not give sourcing consumers names of their
		// own may still hold ours from before (a restart, a lost
		// delete): ask again under a name of this consumer alone, as the
		// reference asks a server that knows no sourcing consumers.
		req.Config.Name += "_" + randomToken()
		req.Config.Sourcing = false
		resp, out = s.create(req)
	}
	if out != 0 {
		return out, false
	}
	l.name = resp.Name
	s.ident = resp.identity
	defer func() {
		if s.retired.Load() {
			// By its stable name, as the reference: the consumer a
			// work-queue or interest origin made durable; one that
			// got a suffix goes by its inactive threshold.
			s.deleteConsumer(stable)
		}
	}()
	return s.copyFrom(l, in, resp)
}

// copyFrom copies what the consumer of l delivers into in, from the
// answer resp that made or reset it, until the link stops making sense.
func (s *sourcer) copyFrom(l *link, in *inbox, resp consumerResponse) (outcome, bool) {
	s.setErr(nil)
	next := s.next.Load()
	if s.mirror {
		// The origin starts past what the mirror holds (it lost those
		// messages): the mirror keeps its seqs, with a gap. Only a
		// consumer that delivered nothing yet says so: one that already
		// delivered (the origin had them when it was made) counts them
		// in delivered, and those deliveries, gaps included, are copied
		// as they come.
		if d := resp.Delivered.Stream; d >= next && resp.Delivered.Consumer == 0 {
			if err := s.target.log.SkipTo(d + 1); err != nil {
				s.setErr(storeError(err))
				return refused, true
			}
			next = d + 1
			s.next.Store(next)
		}
	}
	l.sseq = next - 1
	s.heard.Store(time.Now().UnixNano())
	stall := time.NewTimer(externalStalled)
	defer stall.Stop()
	for {
		select {
		case <-s.stop:
			return stopped, true
		case <-in.kick:
			if out := s.take(l, in.take()); out != 0 {
				return out, true
			}
		case <-stall.C:
			silent := time.Duration(time.Now().UnixNano() - s.heard.Load())
			if silent >= externalStalled {
				s.target.sh.log.Info("external source silent, recreating its consumer",
					"stream", s.target.name, "origin", s.cfg.Name, "api", s.ext.API)
				return lost, true
			}
			stall.Reset(externalStalled - silent)
		}
	}
}

// create sends the consumer create request and waits for its answer.
func (s *sourcer) create(req consumerRequest) (consumerResponse, outcome) {
	body, _ := json.Marshal(req) // plain fields: cannot fail
	return s.ask(req.createSubject(s.ext.API), s.createHeader(), body)
}

// ask sends a request that a consumer's info answers (a create, or a
// durable source's reset) and waits for the answer.
func (s *sourcer) ask(subject string, hdr, body []byte) (consumerResponse, outcome) {
	core := s.target.sh.core
	box := make(responseBox, 1)
	reply := "$JSC.R." + randomToken()
	sub, err := core.Subscribe(reply, box.put)
	if err != nil {
		s.setErr(s.setupError("%v", err))
		return consumerResponse{}, refused
	}
	defer core.Unsubscribe(sub)
	// Sent from a goroutine of its own: an API lane that is full blocks
	// the sender, and that lane's worker may be waiting for this
	// sourcer to stop (a stream update or delete).
	sent := make(chan int, 1)
	go func() { sent <- core.Publish(subject, reply, hdr, body) }()
	select {
	case <-s.stop:
		return consumerResponse{}, stopped
	case n := <-sent:
		if n == 0 {
			s.setErr(s.setupError("no responders for %s", subject))
			return consumerResponse{}, unheard
		}
	}
	t := time.NewTimer(externalCreate)
	defer t.Stop()
	select {
	case <-s.stop:
		return consumerResponse{}, stopped
	case <-t.C:
		s.setErr(s.setupError("consumer request to %s timed out", subject))
		return consumerResponse{}, unheard
	case r := <-box:
		if r.Error != nil {
			s.target.sh.log.Warn("external source consumer refused", "stream", s.target.name,
				"origin", s.cfg.Name, "api", s.ext.API, "err", r.Error)
			s.setErr(r.Error)
			return r, refused
		}
		if r.Name == "" {
			s.setErr(s.setupError("invalid consumer create response"))
			return r, refused
		}
		return r, 0
	}
}

func (s *sourcer) setupError(format string, args ...any) *apiError {
	if s.mirror {
		return newAPIError(500, 10029, format, args...)
	}
	return newAPIError(500, 10045, format, args...)
}

// deleteConsumer removes a consumer of ours from the origin when the
// stream no longer copies it (retired), without waiting for the answer:
// if it is lost, the consumer's inactive threshold removes it.
func (s *sourcer) deleteConsumer(name string) {
	subj := strings.ReplaceAll(s.ext.API+".CONSUMER.DELETE."+s.cfg.Name+"."+name, "..", ".")
	go s.target.sh.core.Publish(subj, "", nil, nil) // never blocks a closing sourcer; see create
}

// createSubject is where this sourcer's create requests go.
func (s *sourcer) createSubject() string {
	r := s.consumerRequest()
	return r.createSubject(s.ext.API)
}

// take handles a run of deliveries in order: control messages are
// answered, data is stored in batches; a non-zero outcome ends the link.
func (s *sourcer) take(l *link, ds []delivery) outcome {
	core := s.target.sh.core
	var batch []jetlog.Msg
	flush := func() outcome {
		if len(batch) == 0 {
			return 0
		}
		e := s.copy(batch)
		batch = batch[:0]
		if e != nil {
			s.setErr(e)
			return refused
		}
		s.setErr(nil)
		return 0
	}
	for _, d := range ds {
		if isControl(d.hdr, d.data) {
			if out := flush(); out != 0 {
				return out
			}
			if d.reply != "" { // flow control: we have taken everything before it
				core.Publish(d.reply, "", flowControlReply(l.dseq, l.sseq), nil)
				continue
			}
			if v, _ := headerValue(d.hdr, "Nats-Last-Consumer"); v != "" {
				if n, err := strconv.ParseUint(v, 10, 64); err == nil && n > 0 && n != l.dseq {
					return lost // the origin delivered what we never got
				}
			}
			if fc, ok := headerValue(d.hdr, "Nats-Consumer-Stalled"); ok && fc != "" {
				// Where we stand, as for a request: an origin acking by
				// flow control acks what we stored.
				core.Publish(fc, "", flowControlReply(l.dseq, l.sseq), nil)
			}
			continue
		}
		a := parseAckReply(d.reply)
		if !a.ok || a.consumer != l.name || a.delivered > 1 {
			continue // an old consumer's, or a redelivery (none with ack none)
		}
		if a.seq <= l.sseq {
			if a.dseq == l.dseq+1 {
				l.dseq++
			}
			continue // stored already
		}
		if a.dseq != l.dseq+1 {
			if out := flush(); out != 0 {
				return out
			}
			return lost
		}
		l.dseq, l.sseq = a.dseq, a.seq
		s.lag.Store(max(a.pending, 1) - 1)
		m := jetlog.Msg{Seq: a.seq, Subject: d.subject, Header: s.inboundHeader(d.hdr), Data: d.data}
		if a.ts > 0 {
			m.Time = time.Unix(0, a.ts) // a mirror keeps it (copy)
		}
		batch = append(batch, m)
		if len(batch) == sourceBatch {
			if out := flush(); out != 0 {
				return out
			}
		}
	}
	return flush()
}

// inboundHeader drops what must not be acted on again in the target: the
// expectations and batch markers of the origin's publish and, for a
// source, an older Nats-Stream-Source (copy adds ours).
func (s *sourcer) inboundHeader(hdr []byte) []byte {
	if len(hdr) == 0 {
		return nil
	}
	hdr = s.target.ownCopied(hdr) // a copied schedule is the target owner's (scheduleowner.go)
	return withoutHeaders(hdr, func(k []byte) bool {
		key := string(k)
		return strings.HasPrefix(key, "Nats-Expected-") || strings.HasPrefix(key, "Nats-Batch-") ||
			(!s.mirror && strings.EqualFold(key, hdrStreamSource))
	})
}

// consumerRequest is the consumer this sourcer asks the origin for,
// starting after what the target holds.
func (s *sourcer) consumerRequest() consumerRequest {
	kind, prefix, meta := "SRC", ".S", "src"
	if s.mirror {
		kind, prefix, meta = "MIRROR", ".M", "mirror"
	}
	deliver := "$JS" + prefix + "." + randomToken()
	if p := s.ext.Deliver; p != "" {
		deliver = strings.ReplaceAll(p+prefix+"."+randomToken(), "..", ".")
	}
	// Named as the reference names it: by the target, its account (bus
	// has the one global account, $G) and domain, and, for a stream
	// sourced more than once, by what it takes.
	id := s.target.name + " $G"
	if d := s.target.sh.domain; d != "" {
		id += " " + d
	}
	if !s.mirror {
		id = tokenHash(id)
		if s.sourcedTwice() {
			id += " " + s.cfg.iname()
		}
	}
	cfg := sourcingConfig{
		Name:              "JS_" + kind + "_" + tokenHash(id),
		DeliverPolicy:     "all",
		AckPolicy:         "none",
		AckWait:           int64(externalAckWait),
		MaxDeliver:        1,
		ReplayPolicy:      "instant",
		DeliverSubject:    deliver,
		FlowControl:       true,
		Heartbeat:         int64(externalHeartbeat),
		InactiveThreshold: int64(externalInactive),
		Direct:            true,
		Sourcing:          true,
		Metadata:          map[string]string{"_nats." + meta + ".stream": s.target.name, "_nats." + meta + ".acc": "$G"},
	}
	if d := s.target.sh.domain; d != "" {
		cfg.Metadata["_nats."+meta+".domain"] = d
	}
	next := s.next.Load()
	if next == 0 {
		next = s.externalStart()
		s.next.Store(next)
	}
	switch {
	case next > 1:
		cfg.DeliverPolicy, cfg.OptStartSeq = "by_start_sequence", next
	case s.cfg.OptStartTime != nil:
		cfg.DeliverPolicy, cfg.OptStartTime = "by_start_time", s.cfg.OptStartTime
	}
	cfg.FilterSubject = s.cfg.FilterSubject
	for _, tr := range s.cfg.SubjectTransforms {
		cfg.FilterSubjects = append(cfg.FilterSubjects, orAll(tr.Source))
	}
	if cfg.FilterSubject == "" && len(cfg.FilterSubjects) == 1 {
		cfg.FilterSubject, cfg.FilterSubjects = cfg.FilterSubjects[0], nil
	}
	if cfg.FilterSubject == ">" && len(cfg.FilterSubjects) == 0 {
		cfg.FilterSubject = ""
	}
	return consumerRequest{Stream: s.cfg.Name, Config: cfg, Action: ""}
}

// sourcedTwice reports whether the target sources this origin name more
// than once (then each consumer name also says what it takes).
func (s *sourcer) sourcedTwice() bool {
	n := 0
	for _, c := range s.target.config().Sources {
		if c.Name == s.cfg.Name {
			n++
		}
	}
	return n > 1
}

// externalStart is the first origin seq to ask for: after the last one
// the target stored, else the configured start (a start time is left to
// the origin: 1 here), else 1.
func (s *sourcer) externalStart() uint64 {
	ts := s.target.log.State()
	if s.mirror {
		if ts.LastSeq > 0 {
			return ts.LastSeq + 1
		}
	} else if seq, ident, ok := s.resumePoint(ts.LastSeq); ok && !s.startOver {
		s.ident = ident // expected of the origin (sourceidentity.go)
		return seq
	}
	if s.cfg.OptStartSeq > 0 {
		return s.cfg.OptStartSeq
	}
	return 1
}
