package jetstream

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// Mirrors and sources between streams of this server. A sourcer copies
// one origin stream's messages into its target: a mirror keeps the
// origin's seqs (gaps where the origin deleted messages or the filter
// leaves them out) and adds nothing; a source appends with new seqs and a
// Nats-Stream-Source header naming the origin seq, which is how a
// restarted source finds where it stopped. Each sourcer is one goroutine
// reading the origin's log directly, woken by the origin's appends; what
// it copies is committed in batches (one fsync each), and it never
// advances past a message its target has not stored, so neither a crash
// nor a full target loses or repeats one. A sourcer whose config names
// external.api reaches its origin through the JetStream API instead, on
// whichever server answers that prefix (sourceexternal.go).

// sourceConfig is a stream's mirror or one of its sources.
type sourceConfig struct {
	Name              string                   `json:"name"`
	OptStartSeq       uint64                   `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time               `json:"opt_start_time,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []subjectTransformConfig `json:"subject_transforms,omitempty"`
	External          *externalStream          `json:"external,omitempty"`
	// Consumer is durable consumer sourcing (API level 4: copy through
	// a consumer made beforehand on the origin; sourcedurable.go).
	Consumer *durableSource `json:"consumer,omitempty"`
}

// sourceInfo is a mirror's or source's state in stream info.
type sourceInfo struct {
	Name              string                   `json:"name"`
	External          *externalStream          `json:"external,omitempty"`
	FilterSubject     string                   `json:"filter_subject,omitempty"`
	SubjectTransforms []subjectTransformConfig `json:"subject_transforms,omitempty"`
	Lag               uint64                   `json:"lag"`
	Active            int64                    `json:"active"` // ns since it last heard of the origin; -1 never
	Error             *apiError                `json:"error,omitempty"`
}

const (
	hdrStreamSource = "Nats-Stream-Source"
	sourceBatch     = 256
	sourceRetry     = time.Second // origin missing, or the target refused a message
)

// checkSourcing validates mirror and sources as the reference does.
func (c *streamConfig) checkSourcing() *apiError {
	if m := c.Mirror; m != nil {
		switch {
		case len(c.Subjects) > 0:
			return newAPIError(400, 10034, "stream mirrors can not contain subjects")
		case len(c.Sources) > 0:
			return newAPIError(400, 10031, "stream mirrors can not also contain other sources")
		case m.OptStartSeq > 0 && m.OptStartTime != nil:
			return newAPIError(400, 10032, "stream mirrors can not have both start seq and start time configured")
		case m.FilterSubject != "" && len(m.SubjectTransforms) > 0:
			return newAPIError(400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter")
		case c.SubjectDeleteMarkerTTL > 0:
			return errStreamConfig("subject delete markers forbidden on mirrors")
		case m.External == nil && !subjects.ValidName(m.Name):
			// An external origin's name is the other side's business.
			return newAPIError(400, 10142, "mirrored stream name is invalid")
		}
		if e := checkSourceFilters(m, 10151, 10154, 10152, "mirror"); e != nil {
			return e
		}
	}
	if e := checkDurableSourcing(c); e != nil {
		return e
	}
	seen := map[string]bool{}
	for _, s := range c.Sources {
		if s == nil || !subjects.ValidName(s.Name) {
			return newAPIError(400, 10141, "sourced stream name is invalid")
		}
		if seen[s.iname()] {
			return newAPIError(400, 10140, "duplicate source configuration detected")
		}
		seen[s.iname()] = true
		if s.FilterSubject != "" && len(s.SubjectTransforms) > 0 {
			return newAPIError(400, 10144, "source with multiple subject transforms cannot also have a single subject filter")
		}
		if e := checkSourceFilters(s, 10145, 10146, 10147, "source"); e != nil {
			return e
		}
		if s.External == nil && s.Name == c.Name {
			return errStreamConfig("stream can not source itself")
		}
	}
	var externals []*externalStream
	if c.Mirror != nil {
		externals = append(externals, c.Mirror.External)
	}
	for _, s := range c.Sources {
		externals = append(externals, s.External)
	}
	for _, e := range externals {
		if err := checkExternal(e); err != nil {
			return err
		}
	}
	return nil
}

func checkSourceFilters(s *sourceConfig, badSource, badDest, overlap int, what string) *apiError {
	if s.FilterSubject != "" && !subjects.ValidSubject(s.FilterSubject) {
		return newAPIError(400, badSource, "%s transform source: invalid subject %s", what, s.FilterSubject)
	}
	for i, tr := range s.SubjectTransforms {
		if tr.Source != "" && !subjects.ValidSubject(tr.Source) {
			return newAPIError(400, badSource, "%s transform source: invalid subject %s", what, tr.Source)
		}
		if err := subjects.ValidateMapping(tr.Source, tr.Destination); err != nil {
			return newAPIError(400, badDest, "%s transform: %v", what, err)
		}
		for _, other := range s.SubjectTransforms[:i] {
			if subjects.Overlap(orAll(tr.Source), orAll(other.Source)) {
				if what == "mirror" {
					return newAPIError(400, overlap, "mirror subject filters can not overlap")
				}
				return newAPIError(400, overlap, "source filters can not overlap")
			}
		}
	}
	return nil
}

func orAll(s string) string {
	if s == "" {
		return ">"
	}
	return s
}

// iname names a source by its stream and what it takes from it, as the
// reference's Nats-Stream-Source header does.
func (s *sourceConfig) iname() string { return s.originName() + " " + s.takes() }

// originName is the first field of the Nats-Stream-Source header: the
// origin's name, and for an external one the hash of its API prefix
// (the same name may be a stream in several domains), as the reference.
func (s *sourceConfig) originName() string {
	name := s.Name
	if e := s.External; e != nil {
		name += ":" + tokenHash(e.API)
	}
	if d := s.Consumer; d != nil {
		name += ":C=" + tokenHash(d.Name)
	}
	return name
}

// takes is a source's filter and destination: "<filter> <dest>".
func (s *sourceConfig) takes() string {
	filter, dest := orAll(s.FilterSubject), ">"
	if len(s.SubjectTransforms) > 0 {
		var fs, ds []string
		for _, tr := range s.SubjectTransforms {
			fs, ds = append(fs, orAll(tr.Source)), append(ds, orAll(tr.Destination))
		}
		filter, dest = strings.Join(fs, "\x07"), strings.Join(ds, "\x07")
	}
	return filter + " " + dest
}

// sourcer copies one origin into one target (see the top of the file).
type sourcer struct {
	target *stream
	cfg    sourceConfig
	mirror bool
	takes  string          // sourceConfig.takes, for the Nats-Stream-Source header
	origin string          // sourceConfig.originName, for the same
	ext    *externalStream // nil: the origin is read directly
	// ident is the external origin's stream identity, which the
	// reference adds to Nats-Stream-Source; startOver says the origin
	// was found made again, so the stored headers no longer say where
	// to resume (sourceidentity.go). Only the goroutine uses them.
	ident        string
	startOver    bool
	levelRefused bool // the origin knows no level 5
	// retired says the stream no longer has this mirror or source (an
	// update removed it, or the stream is deleted): stopping, the
	// sourcer deletes its consumer on the origin.
	retired atomic.Bool
	// filters select what is taken from the origin (nil: all), and
	// transforms[i] (nil: none) rewrites what filters[i] matched.
	filters    []string
	transforms []*subjects.Transform
	kick       chan struct{} // capacity 1
	stop, done chan struct{}

	next  atomic.Uint64          // origin seq to copy next (0 until known)
	heard atomic.Int64           // unix ns it last read the origin
	local atomic.Pointer[stream] // the origin, when read directly
	lag   atomic.Uint64          // an external origin's, from its deliveries
	mu    sync.Mutex             // guards err
	err   *apiError              // why it is stuck, if it is
	// checked is what the owner's rights were last checked against, and
	// denied the answer (only the goroutine uses them).
	checked authCheck
	denied  *apiError
}

// authCheck is what a sourcer's check of its owner's rights depends on:
// the origin and its config, the target's config (its owner), and the
// users' rights.
type authCheck struct {
	origin                       *stream
	originGen, targetGen, rights uint64
}

// ownerMayRead checks that the target's owner may read what the source
// takes of origin (owner.go), again only when the origin, either config
// or the users' rights changed: once per change, not per message.
func (s *sourcer) ownerMayRead(origin *stream) *apiError {
	sh := s.target.sh
	key := authCheck{origin, origin.cfgGen.Load(), s.target.cfgGen.Load(), sh.rightsGen.Load()}
	if key == s.checked {
		return s.denied
	}
	cfg, ocfg := s.target.config(), origin.config()
	owner, e := sh.ownerRights(cfg.owner)
	if e == nil {
		e = sh.authorize(owner, sh.sourceFlow(s.cfg, &ocfg))
	}
	if e != nil && s.denied == nil {
		sh.log.Warn("source suspended: its owner may not read what it copies", "stream", s.target.name, "origin", s.cfg.Name, "owner", cfg.owner, "err", e.Description)
	}
	s.checked, s.denied = key, e
	return e
}

func newSourcer(target *stream, cfg sourceConfig, mirror bool) *sourcer {
	s := &sourcer{target: target, cfg: cfg, mirror: mirror, takes: cfg.takes(), origin: cfg.originName(), ext: cfg.external(),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	switch {
	case len(cfg.SubjectTransforms) > 0:
		for _, tr := range cfg.SubjectTransforms {
			s.filters = append(s.filters, orAll(tr.Source))
			var t *subjects.Transform
			if tr.Destination != "" {
				t, _ = subjects.NewTransform(orAll(tr.Source), tr.Destination) // checked by checkSourcing
			}
			s.transforms = append(s.transforms, t)
		}
	case cfg.FilterSubject != "":
		s.filters, s.transforms = []string{cfg.FilterSubject}, []*subjects.Transform{nil}
	}
	if s.ext != nil {
		go s.runExternal()
	} else {
		go s.run()
	}
	return s
}

func (s *sourcer) close() {
	close(s.stop)
	<-s.done
}

func (s *sourcer) signal() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *sourcer) setErr(e *apiError) {
	s.mu.Lock()
	s.err = e
	s.mu.Unlock()
}

// wait sleeps until the origin stores something, d passes, or stop.
func (s *sourcer) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.kick:
	case <-t.C:
	case <-s.stop:
		return false
	}
	return true
}

func (s *sourcer) run() {
	defer close(s.done)
	var watching *stream
	defer func() {
		if watching != nil {
			watching.unwatch(s)
		}
	}()
	for {
		origin := s.target.sh.lookup(s.cfg.Name)
		if origin != watching {
			if watching != nil {
				watching.unwatch(s)
			}
			if origin != nil {
				origin.watch(s)
			}
			watching = origin
			s.local.Store(origin)
		}
		if origin == nil {
			s.setErr(errStreamNotFound())
			if !s.wait(sourceRetry) {
				return
			}
			continue
		}
		if e := s.ownerMayRead(origin); e != nil {
			s.setErr(e)
			if !s.wait(sourceRetry) {
				return
			}
			continue
		}
		if s.next.Load() == 0 {
			s.next.Store(s.startSeq(origin))
		}
		msgs, err := origin.log.NextBatch(s.next.Load(), s.filters, sourceBatch)
		s.heard.Store(time.Now().UnixNano())
		if err != nil || len(msgs) == 0 {
			if !s.wait(5 * sourceRetry) {
				return
			}
			continue
		}
		if e := s.copy(msgs); e != nil {
			s.setErr(e)
			if !s.wait(sourceRetry) {
				return
			}
			continue
		}
		s.setErr(nil)
	}
}

// copy stores msgs in the target, advancing next past each one stored.
func (s *sourcer) copy(msgs []jetlog.Msg) *apiError {
	t := s.target
	out := make([]jetlog.Msg, 0, len(msgs))
	// A mirror keeps its origin's times as well as its seqs.
	expect := jetlog.Expect{NoDedup: s.mirror || t.config().DuplicateWindow == 0, KeepTime: s.mirror}
	last := t.log.State().LastSeq // the target's, as out is stored
	flush := func() *apiError {
		if len(out) == 0 {
			return nil
		}
		acks, err := t.log.AppendBatch(out, expect)
		stored := len(acks)
		last += uint64(stored)
		if stored > 0 {
			// Msg.Seq carries the origin seq: jetlog ignores it on append.
			s.next.Store(out[stored-1].Seq + 1)
			t.notifyConsumers()
			if tr := t.tr.Load(); tr.republish != nil {
				for i, ack := range acks {
					m := out[i]
					m.Time = time.Unix(0, ack.TS)
					t.republish(tr, m, ack.Seq)
				}
			}
		}
		out = out[:0]
		if err != nil {
			t.sh.log.Warn("stream source stalled", "stream", t.name, "origin", s.cfg.Name, "err", err)
			return storeError(err)
		}
		return nil
	}
	for _, m := range msgs {
		subj, ok := s.subject(m.Subject)
		if !ok {
			continue // NextBatch filtered; cannot happen
		}
		if s.mirror {
			if m.Seq > last+uint64(len(out))+1 {
				if e := flush(); e != nil {
					return e
				}
				if err := t.log.SkipTo(m.Seq); err != nil {
					return storeError(err)
				}
				last = m.Seq - 1
			}
			out = append(out, jetlog.Msg{Seq: m.Seq, Time: m.Time, Subject: subj, Header: t.ownCopied(m.Header), Data: m.Data})
			continue
		}
		src := s.origin + " " + strconv.FormatUint(m.Seq, 10) + " " + s.takes + " " + m.Subject
		if s.ident != "" {
			src += " " + s.ident
		}
		hdr := withHeader(t.ownCopied(m.Header), hdrStreamSource, src) // a copied schedule is the target owner's
		if t.counter.Load() && header.Value(m.Header, hdrIncr) != nil {
			// A counter total into a counter stream: summed, one at a
			// time (countersources.go).
			if e := flush(); e != nil {
				return e
			}
			if _, err := t.sourceCounter(jetlog.Msg{Subject: subj, Header: hdr, Data: m.Data}, s.cfg.Name, m.Subject); err != nil {
				t.sh.log.Warn("stream source stalled", "stream", t.name, "origin", s.cfg.Name, "err", err)
				return storeError(err)
			}
			last++
			s.next.Store(m.Seq + 1)
			t.notifyConsumers()
			continue
		}
		out = append(out, jetlog.Msg{Seq: m.Seq, Subject: subj, Header: hdr, Data: m.Data})
	}
	if e := flush(); e != nil {
		return e
	}
	if last := msgs[len(msgs)-1].Seq; last >= s.next.Load() {
		s.next.Store(last + 1)
	}
	return nil
}

// subject is what a message of the origin is stored under.
func (s *sourcer) subject(subj string) (string, bool) {
	if len(s.filters) == 0 {
		return subj, true
	}
	for i, f := range s.filters {
		if subjects.Matches(f, subj) {
			if tr := s.transforms[i]; tr != nil {
				if out, err := tr.Apply(subj); err == nil {
					return out, true
				}
			}
			return subj, true
		}
	}
	return "", false
}

// startSeq is where copying starts: after what the target already holds
// of this origin, else per the start options, else at the beginning.
func (s *sourcer) startSeq(origin *stream) uint64 {
	ts := s.target.log.State()
	if s.mirror {
		if ts.LastSeq > 0 {
			return ts.LastSeq + 1
		}
	} else if seq, ok := s.resumeSeq(ts.LastSeq); ok {
		return seq
	}
	switch {
	case s.cfg.OptStartSeq > 0:
		return s.cfg.OptStartSeq
	case s.cfg.OptStartTime != nil:
		return origin.log.SeqAtTime(*s.cfg.OptStartTime)
	}
	return 1
}

// resumeSeq finds, newest first, the last message this source stored in
// the target (one read per message back to it; the target's own
// messages and other sources' are skipped).
func (s *sourcer) resumeSeq(last uint64) (uint64, bool) {
	seq, _, ok := s.resumePoint(last)
	return seq, ok
}

// resumePoint is resumeSeq with the origin's identity the header names
// ("" if none).
func (s *sourcer) resumePoint(last uint64) (uint64, string, bool) {
	prefix := s.origin + " "
	rest := " " + s.takes + " "
	for seq := last; seq > 0; seq-- {
		m, err := s.target.log.Get(seq)
		if err != nil {
			if seq < s.target.log.State().FirstSeq {
				break
			}
			continue
		}
		v, ok := headerValue(m.Header, hdrStreamSource)
		if !ok || !strings.HasPrefix(v, prefix) {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) < 4 || !strings.HasPrefix(v[len(prefix)+len(fields[1]):], rest) {
			continue
		}
		if n, err := strconv.ParseUint(fields[1], 10, 64); err == nil {
			ident := ""
			if len(fields) > 5 {
				ident = fields[5]
			}
			return n + 1, ident, true
		}
	}
	return 0, "", false
}

// stoppedSource is stream info's entry for a source that is not running,
// and why.
func stoppedSource(cfg sourceConfig, why *apiError) *sourceInfo {
	return &sourceInfo{Name: cfg.Name, External: cfg.External, FilterSubject: cfg.FilterSubject,
		SubjectTransforms: cfg.SubjectTransforms, Active: -1, Error: why}
}

// info is the sourcer's state for stream info.
func (s *sourcer) info() *sourceInfo {
	i := &sourceInfo{Name: s.cfg.Name, External: s.cfg.External, FilterSubject: s.cfg.FilterSubject,
		SubjectTransforms: s.cfg.SubjectTransforms, Active: -1}
	if h := s.heard.Load(); h != 0 {
		i.Active = max(time.Now().UnixNano()-h, 0)
	}
	if s.ext != nil {
		i.Lag = s.lag.Load()
	} else if o := s.local.Load(); o != nil {
		if last, next := o.log.State().LastSeq, s.next.Load(); next > 0 && last >= next {
			i.Lag = last - next + 1
		}
	}
	s.mu.Lock()
	i.Error = s.err
	s.mu.Unlock()
	return i
}
