package jetstream

import (
	"encoding/json"
	"slices"

	"github.com/bus-dev/bus/subjects"
)

// Owners (docs/security.md, "What the server does on a user's behalf").
// A stream or consumer makes the server act without a client in the
// loop: capture through a subject transform, copy another stream (a
// source or mirror, possibly transformed), republish what it stores,
// deliver to a push subject, dead-letter. Each is done on behalf of its
// owner, the user who created or last updated it, and is checked against
// that user's rights: here when it is created or updated, by the sourcer
// when it finds (or its origin changes), and again for every asset when
// the rights change (Service.RightsChanged, rightscheck.go). What exceeds
// them is refused, or, when a reload shrank them, suspended until they
// come back; nothing stored is lost.
//
// The owner is recorded with the asset's stored config under ownerField
// (never echoed to clients, never taken from a request: a request naming
// it is refused as an unknown field). "" is the operator: no user
// (authorization off, a token), or an asset stored before owners were
// recorded; it may do anything.

// ownerField is the key of the owner in a stored stream or consumer
// config. Part of the store's format.
const ownerField = "x_bus_owner"

// ownerOf names the user behind a request; "" for the server itself or
// when authorization is off.
func ownerOf(from Rights) string {
	if from == nil {
		return ""
	}
	return from.User()
}

// storedWithOwner encodes v (a config) for the store, with its owner.
func storedWithOwner(v any, owner string) ([]byte, error) {
	if owner == "" {
		return json.Marshal(v)
	}
	o, _ := json.Marshal(owner) // a string cannot fail
	return marshalWithExtra(v, map[string]json.RawMessage{ownerField: o})
}

// takeOwner removes the owner from the fields a stored config decoded as
// unknown, and returns it.
func takeOwner(extra map[string]json.RawMessage) string {
	raw, ok := extra[ownerField]
	if !ok {
		return ""
	}
	delete(extra, ownerField)
	var owner string
	_ = json.Unmarshal(raw, &owner) // not a string: the operator's
	return owner
}

// flow is what an asset makes the server do on its owner's behalf: the
// subjects (patterns) it reads, as they were published, and those it
// publishes to.
type flow struct {
	reads     []string
	publishes []string
}

// authorize is the one place that decides whether owner may have the
// server do f: every read inside its subscribe rights (unless
// reference_stored_reads), every publish inside its publish rights. A
// nil owner is the server's own (full rights).
func (sh *shared) authorize(owner Rights, f flow) *apiError {
	if owner == nil {
		return nil
	}
	if !sh.referenceReads {
		for _, s := range f.reads {
			if !owner.MayRead(s) {
				return errMayNotRead(owner, s)
			}
		}
	}
	for _, s := range f.publishes {
		if !owner.MayPublish(s) {
			return errMayNotPublish(owner, s)
		}
	}
	return nil
}

func errMayNotPublish(from Rights, subject string) *apiError {
	return newAPIError(403, errCodePermissions, "user %q may not publish to %q", from.User(), subject)
}

// streamFlow is what a stream config makes the server do of its own:
// capture through its subject transform (reading the captured subjects
// the transform applies to) and republish (reading what it republishes,
// publishing where the destination reaches). Sources and mirrors are the
// sourcers' (sourceFlow), checked against what their origin holds.
func streamFlow(c streamConfig) flow {
	f := transformFlow(c)
	var input *subjects.Transform
	if t := c.SubjectTransform; t != nil {
		input, _ = subjects.NewTransform(orAll(t.Source), t.Destination) // checked by checkTransforms
	}
	if r := c.RePublish; r != nil {
		for _, s := range c.Subjects {
			read := ""
			switch {
			case input != nil && subjects.Overlap(input.Source(), s) && subjects.Overlap(r.Source, input.Reach()):
				read = s // republished as the transform made it
			case subjects.Overlap(r.Source, s):
				read = narrower(r.Source, s)
			}
			if read != "" && !slices.Contains(f.reads, read) {
				f.reads = append(f.reads, read)
			}
		}
		if t, err := subjects.NewTransform(r.Source, r.Destination); err == nil {
			f.publishes = append(f.publishes, t.Reach())
		}
	}
	return f
}

// transformFlow is what a stream's subject transform reads: the captured
// subjects it applies to. While its owner may not read them, the stream
// captures nothing (stream.setSuspended), or the transform would store
// them under subjects others read.
func transformFlow(c streamConfig) flow {
	var f flow
	if t := c.SubjectTransform; t != nil {
		for _, s := range c.Subjects {
			if subjects.Overlap(orAll(t.Source), s) {
				f.reads = append(f.reads, narrower(orAll(t.Source), s))
			}
		}
	}
	return f
}

// streamAllowed checks what a stream config makes the server do for
// owner: its own flow, and what each source and mirror reads of its
// origin as that stands now (a local origin not there yet is checked by
// its sourcer when it appears; one in another domain may hold anything).
func (sh *shared) streamAllowed(owner Rights, c streamConfig) *apiError {
	if e := sh.authorize(owner, streamFlow(c)); e != nil {
		return e
	}
	for _, s := range c.copied() {
		var ocfg *streamConfig
		if origin := sh.localOrigin(*s); origin != nil {
			oc := origin.config()
			ocfg = &oc
		} else if s.external() == nil {
			continue
		}
		if e := sh.authorize(owner, sh.sourceFlow(*s, ocfg)); e != nil {
			return e
		}
	}
	return nil
}

// narrower is the one of two overlapping patterns that lies inside the
// other, or b (what is captured) when neither does: what a transform or
// republish with source a reads of captured subjects b, or more.
func narrower(a, b string) string {
	if subjects.Within(a, b) {
		return a
	}
	return b
}

// sourceFlow is what a source (or mirror) reads of its origin, whose
// config is origin (nil: not found, or in another domain): its filters,
// or all the origin may hold.
func (sh *shared) sourceFlow(s sourceConfig, origin *streamConfig) flow {
	var f flow
	switch {
	case len(s.SubjectTransforms) > 0:
		for _, tr := range s.SubjectTransforms {
			f.reads = append(f.reads, orAll(tr.Source))
		}
	case s.FilterSubject != "":
		f.reads = []string{s.FilterSubject}
	case origin == nil:
		f.reads = []string{">"}
	default:
		f.reads = sh.heldSubjects(*origin, maxHeldDepth)
	}
	return f
}

// consumerFlow is what a consumer makes the server do for its owner:
// read its filters (every subject the stream may hold when it has none),
// deliver to its push subject, dead-letter to its dead-letter subject.
func (sh *shared) consumerFlow(c consumerConfig, scfg streamConfig) flow {
	f := flow{reads: c.filters()}
	if len(f.reads) == 0 {
		f.reads = sh.heldSubjects(scfg, maxHeldDepth)
	}
	if c.DeliverSubject != "" {
		f.publishes = append(f.publishes, c.DeliverSubject)
	}
	if c.DeadLetterSubject != "" {
		f.publishes = append(f.publishes, c.DeadLetterSubject)
	}
	return f
}

// maxHeldDepth bounds how far heldSubjects follows sources of sources
// (a cycle, or a chain longer than anyone builds, reads as everything).
const maxHeldDepth = 8

// heldSubjects are patterns covering every subject a stream's messages
// may have: what it captures (and what its transform makes of it), and
// what its mirror and sources copy in, followed through their origins.
func (sh *shared) heldSubjects(c streamConfig, depth int) []string {
	held := append([]string(nil), c.Subjects...)
	if t := c.SubjectTransform; t != nil {
		if tr, err := subjects.NewTransform(orAll(t.Source), t.Destination); err == nil {
			held = append(held, tr.Reach())
		}
	}
	for _, s := range c.copied() {
		held = append(held, sh.sourceHolds(*s, depth)...)
	}
	return held
}

// sourceHolds are the subjects a source copies into its target.
func (sh *shared) sourceHolds(s sourceConfig, depth int) []string {
	switch {
	case len(s.SubjectTransforms) > 0:
		var out []string
		for _, tr := range s.SubjectTransforms {
			if t, err := subjects.NewTransform(orAll(tr.Source), tr.Destination); tr.Destination != "" && err == nil {
				out = append(out, t.Reach())
			} else {
				out = append(out, orAll(tr.Source))
			}
		}
		return out
	case s.FilterSubject != "":
		return []string{s.FilterSubject}
	}
	origin := sh.localOrigin(s)
	if origin == nil || depth == 0 {
		return []string{">"}
	}
	return sh.heldSubjects(origin.config(), depth-1)
}

// copied lists the stream's mirror and sources.
func (c *streamConfig) copied() []*sourceConfig {
	out := append([]*sourceConfig(nil), c.Sources...)
	if c.Mirror != nil {
		out = append(out, c.Mirror)
	}
	return out
}

// localOrigin is the stream a source reads directly, nil when it is in
// another domain or does not exist.
func (sh *shared) localOrigin(s sourceConfig) *stream {
	if s.external() != nil || sh.lookup == nil {
		return nil
	}
	return sh.lookup(s.Name)
}
