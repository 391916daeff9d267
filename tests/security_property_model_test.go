package tests

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bus-dev/bus/server"
)

// The model of TestSecurityProperty (security_property_test.go): the
// subject universe, users and their rights by brute force, the streams
// and consumers as accepted, and where each message's data may
// legitimately go.

// Rights entries are only area.>, area.1, area.2 (never area.3), so a
// pattern is readable exactly when every literal of the universe it
// matches is: the model needs no pattern containment.

var (
	propCaptureAreas = []string{"pub", "secret", "feed", "x"}
	propAreas        = append(slices.Clone(propCaptureAreas), "cmd") // cmd: republish and push only, never captured
)

// propUniverse are the literals messages are published on.
func propUniverse() []string {
	var out []string
	for _, a := range propCaptureAreas {
		for _, n := range []string{"1", "2", "3"} {
			out = append(out, a+"."+n)
		}
	}
	return out
}

// propMatch is the model's subject matching: literal tokens and a
// trailing > only (all the generator makes).
func propMatch(pattern, subject string) bool {
	if prefix, ok := strings.CutSuffix(pattern, ">"); ok {
		return strings.HasPrefix(subject, prefix) && len(subject) > len(prefix)
	}
	return pattern == subject
}

// propTransform maps src (area.> or a literal) to dst of the same shape.
type propTransform struct{ src, dst string }

func (t propTransform) apply(subject string) (string, bool) {
	if !propMatch(t.src, subject) {
		return "", false
	}
	if prefix, ok := strings.CutSuffix(t.src, ">"); ok {
		return strings.TrimSuffix(t.dst, ">") + strings.TrimPrefix(subject, prefix), true
	}
	return t.dst, true
}

// propUser is a user's rights as area entries (admin has none: all).
type propUser struct {
	name                        string
	pubAllow, subAllow, subDeny []string
}

func (u propUser) config() server.User {
	if u.name == "admin" {
		return server.User{Name: "admin", Password: "p"}
	}
	return server.User{Name: u.name, Password: "p", Permissions: &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: append([]string{"$JS.API.>", "$JS.ACK.>", "_INBOX.>"}, u.pubAllow...)},
		Subscribe: &server.SubjectPermission{Allow: append([]string{"_INBOX.>"}, u.subAllow...), Deny: u.subDeny},
	}}
}

func (u propUser) mayRead(subject string) bool {
	if u.name == "admin" {
		return true
	}
	in := func(p string) bool { return propMatch(p, subject) }
	return slices.ContainsFunc(u.subAllow, in) && !slices.ContainsFunc(u.subDeny, in)
}

func (u propUser) mayPublish(subject string) bool {
	return u.name == "admin" || slices.ContainsFunc(u.pubAllow, func(p string) bool { return propMatch(p, subject) })
}

// propEntries picks an area's rights entries.
func propEntries(r *rand.Rand, area string) []string {
	switch r.IntN(5) {
	case 0, 1:
		return []string{area + ".>"}
	case 2:
		return []string{area + ".1"}
	case 3:
		return []string{area + ".1", area + ".2"}
	}
	return nil
}

func propRandomUser(r *rand.Rand, name string) propUser {
	u := propUser{name: name}
	for _, a := range propAreas {
		u.pubAllow = append(u.pubAllow, propEntries(r, a)...)
		u.subAllow = append(u.subAllow, propEntries(r, a)...)
	}
	if r.IntN(3) == 0 {
		a := propCaptureAreas[r.IntN(len(propCaptureAreas))]
		u.subDeny = []string{[]string{a + ".>", a + ".1", a + ".2"}[r.IntN(3)]}
	}
	return u
}

// propSource is a source or mirror: its origin (an index into the
// world's streams) and what it takes: all, a filter, or a transform.
type propSource struct {
	origin int
	filter string
	tr     *propTransform
}

func (s propSource) take(subject string) (string, bool) {
	switch {
	case s.tr != nil:
		return s.tr.apply(subject)
	case s.filter != "":
		return subject, propMatch(s.filter, subject)
	}
	return subject, true
}

type propStored struct {
	subject string
	n       int
}

type propStream struct {
	name, owner string
	subjects    []string
	transform   *propTransform
	sources     []propSource
	mirror      bool
	republish   *propTransform
	suspended   bool
	msgs        []propStored // what the model says it holds
}

type propConsumer struct {
	stream, name, owner, filter, deliver string
	suspended                            bool
}

// propWorld is one seed's model: users, the accepted assets, and for
// each message the subjects its data legitimately reached.
type propWorld struct {
	t         *testing.T
	r         *rand.Rand
	users     map[string]propUser
	names     []string // users and admin, in a fixed order
	streams   []*propStream
	consumers []*propConsumer
	orig      map[int]string
	legit     map[int]map[string]bool
	next      int
}

func (w *propWorld) stream(name string) *propStream {
	for _, st := range w.streams {
		if st.name == name {
			return st
		}
	}
	return nil
}

// held are the literals a stream may hold, from the universe through
// its capture (and transform) and its sources.
func (w *propWorld) held(st *propStream) []string {
	var out []string
	for _, lit := range propUniverse() {
		if y, ok := st.capture(lit); ok {
			out = append(out, y)
		}
	}
	for _, src := range st.sources {
		for _, y := range w.held(w.streams[src.origin]) {
			if yy, ok := src.take(y); ok {
				out = append(out, yy)
			}
		}
	}
	return out
}

func (st *propStream) capture(lit string) (string, bool) {
	if !slices.ContainsFunc(st.subjects, func(p string) bool { return propMatch(p, lit) }) {
		return "", false
	}
	if st.transform != nil {
		if y, ok := st.transform.apply(lit); ok {
			return y, true
		}
	}
	return lit, true
}

// refusesCapture says a suspended stream captures nothing: its owner may
// not read all that its subject transform applies to, so storing would
// launder it.
func (w *propWorld) refusesCapture(st *propStream) bool {
	if !st.suspended || st.transform == nil {
		return false
	}
	owner := w.users[st.owner]
	for _, lit := range propUniverse() {
		if _, ok := st.capture(lit); ok && propMatch(st.transform.src, lit) && !owner.mayRead(lit) {
			return true
		}
	}
	return false
}

// streamExceeds is oracle A for a stream: what of it its owner's rights
// do not cover ("" when they cover it all).
func (w *propWorld) streamExceeds(st *propStream) string {
	owner := w.users[st.owner]
	for _, lit := range propUniverse() {
		y, ok := st.capture(lit)
		if !ok {
			continue
		}
		if st.transform != nil && propMatch(st.transform.src, lit) && !owner.mayRead(lit) {
			return "its transform reads " + lit
		}
		if st.republish != nil && propMatch(st.republish.src, y) && !owner.mayRead(lit) {
			return "its republish reads " + lit
		}
	}
	if st.republish != nil {
		for _, y := range w.held(st) {
			if z, ok := st.republish.apply(y); ok && !owner.mayPublish(z) {
				return "its republish publishes to " + z
			}
		}
	}
	for _, src := range st.sources {
		for _, y := range w.held(w.streams[src.origin]) {
			if _, ok := src.take(y); ok && !owner.mayRead(y) {
				return "its source reads " + y + " of " + w.streams[src.origin].name
			}
		}
	}
	return ""
}

func (w *propWorld) consumerExceeds(c *propConsumer) string {
	owner := w.users[c.owner]
	for _, y := range w.held(w.stream(c.stream)) {
		if (c.filter == "" || propMatch(c.filter, y)) && !owner.mayRead(y) {
			return "it reads " + y
		}
	}
	if c.deliver != "" && !owner.mayPublish(c.deliver) {
		return "it delivers to " + c.deliver
	}
	return ""
}

// publish runs message n on subject o through the model: where it is
// stored and which subjects its data legitimately reaches.
func (w *propWorld) publish(o string, n int) {
	w.orig[n] = o
	w.legit[n] = map[string]bool{o: true}
	for i, st := range w.streams {
		if len(st.subjects) == 0 || w.refusesCapture(st) {
			continue
		}
		y, ok := st.capture(o)
		if !ok {
			continue
		}
		// A capture is no read; a transform is, by its owner.
		legit := st.transform == nil || !propMatch(st.transform.src, o) || w.users[st.owner].mayRead(o)
		w.store(i, y, n, legit, o)
	}
}

// store adds message n on subject y to stream i (legit: every hop so far
// was within its owner's rights; pre: the captured subject, "" when
// sourced) and follows its republish and the sources of the stream.
func (w *propWorld) store(i int, y string, n int, legit bool, pre string) {
	st := w.streams[i]
	owner := w.users[st.owner]
	st.msgs = append(st.msgs, propStored{y, n})
	if legit {
		w.legit[n][y] = true
	}
	if r := st.republish; r != nil && !st.suspended && legit {
		if z, ok := r.apply(y); ok && owner.mayPublish(z) && (pre == "" || owner.mayRead(pre)) {
			w.legit[n][z] = true
		}
	}
	for j, other := range w.streams {
		if other.suspended {
			continue
		}
		for _, src := range other.sources {
			if src.origin != i {
				continue
			}
			if yy, ok := src.take(y); ok {
				w.store(j, yy, n, legit && w.users[other.owner].mayRead(y), "")
			}
		}
	}
}

// mayReceive is oracle B: user may see message n.
func (w *propWorld) mayReceive(user string, n int) bool {
	u := w.users[user]
	for y := range w.legit[n] {
		if u.mayRead(y) {
			return true
		}
	}
	return false
}
