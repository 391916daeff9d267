package jetstream

import (
	"strconv"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// A stream's subject transform rewrites what it captures before it is
// stored; republish sends every stored message on to another subject
// (core NATS: at most once), with headers saying where it is stored, as
// the reference does. Both use subjects.Transform, the one transform
// engine (core mappings use it too).

// subjectTransformConfig is a stream's subject_transform.
type subjectTransformConfig struct {
	Source      string `json:"src"`
	Destination string `json:"dest"`
}

// rePublishConfig is a stream's republish.
type rePublishConfig struct {
	Source      string `json:"src,omitempty"`
	Destination string `json:"dest"`
	HeadersOnly bool   `json:"headers_only,omitempty"`
}

// checkTransforms validates subject_transform and republish as the
// reference does, filling in republish's default source.
func (c *streamConfig) checkTransforms() *apiError {
	if t := c.SubjectTransform; t != nil {
		if t.Source != "" && !subjects.ValidSubject(t.Source) {
			return newAPIError(400, 10155, "stream transform source: invalid subject %s", t.Source)
		}
		if err := subjects.ValidateMapping(t.Source, t.Destination); err != nil {
			return newAPIError(400, 10156, "stream transform: %v", err)
		}
	}
	r := c.RePublish
	if r == nil {
		return nil
	}
	if r.Source == "" {
		r.Source = ">"
	}
	// '>' to '>' with a transform whose source is the stream's one subject
	// republishes what the transform made, as the reference allows.
	if r.Destination == ">" && r.Source == ">" && c.SubjectTransform != nil && len(c.Subjects) == 1 && c.SubjectTransform.Source == c.Subjects[0] {
		r.Source, r.Destination = c.SubjectTransform.Destination, c.SubjectTransform.Destination
	}
	for _, s := range c.Subjects {
		if subjects.Overlap(r.Destination, s) {
			return errStreamConfig("stream configuration for republish destination forms a cycle")
		}
	}
	if _, err := subjects.NewTransform(r.Source, r.Destination); err != nil {
		return errStreamConfig("stream configuration for republish with transform from '%s' to '%s' not valid", r.Source, r.Destination)
	}
	return nil
}

// transforms are a stream's compiled transforms; nil fields are off.
type transforms struct {
	input       *subjects.Transform
	republish   *subjects.Transform
	headersOnly bool
	// refused, when set, refuses every capture: the owner's rights no
	// longer cover the input transform (rightscheck.go).
	refused *apiError
}

func compileTransforms(c streamConfig) transforms {
	var t transforms
	if s := c.SubjectTransform; s != nil {
		t.input, _ = subjects.NewTransform(s.Source, s.Destination) // checked by checkTransforms
	}
	if r := c.RePublish; r != nil {
		t.republish, _ = subjects.NewTransform(r.Source, r.Destination)
		t.headersOnly = r.HeadersOnly
	}
	return t
}

// storedSubject is the subject a captured message is stored under.
func (t *transforms) storedSubject(subject string) string {
	if t.input == nil {
		return subject
	}
	if out, err := t.input.Apply(subject); err == nil {
		return out
	}
	return subject // not matching the source: stored as it came
}

// republish sends a just-stored message on, if the stream republishes
// its subject. Runs on the appender goroutine, after the commit.
func (st *stream) republish(t *transforms, m jetlog.Msg, seq uint64) {
	if t.republish == nil {
		return
	}
	to, err := t.republish.Apply(m.Subject)
	if err != nil || !subjects.ValidLiteral(to) {
		return
	}
	last := st.log.PrevSeqBySubject(m.Subject, seq)
	ts := m.Time
	if ts.IsZero() {
		ts = st.sh.now()
	}
	kv := []string{
		"Nats-Stream", st.name,
		"Nats-Subject", m.Subject,
		"Nats-Sequence", strconv.FormatUint(seq, 10),
		"Nats-Time-Stamp", ts.UTC().Format(time.RFC3339Nano),
		"Nats-Last-Sequence", strconv.FormatUint(last, 10),
	}
	data := m.Data
	if t.headersOnly {
		kv = append(kv, "Nats-Msg-Size", strconv.Itoa(len(m.Data)))
		data = nil
	}
	st.sh.core.Publish(to, "", withHeaders(m.Header, kv...), data)
}
