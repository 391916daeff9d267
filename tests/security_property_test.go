package tests

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// The property of the security issue (docs/security.md, "What the server
// does on a user's behalf"): random users and rights, random streams
// (transforms, sources, mirrors, republish) and consumers (pull, push)
// created by random users, random publishes, a reload that shrinks one
// user's rights, and three oracles over a brute-force model of a small
// subject universe:
//
//	A. every accepted asset (and, after the reload, every asset not
//	   suspended) is within its owner's rights: it reads only what the
//	   owner may read and publishes only where the owner may publish;
//	B. no message reaches a user, by any path (core subscription, push,
//	   pull, msg get, direct get), unless the user may read its original
//	   subject, or its data got to a subject the user may read through
//	   hops each within its owner's rights (an owner who may read a
//	   subject may pass it on: that is not a leak);
//	C. what the server publishes for an owner (republish, push and pull
//	   deliveries, seen by an admin subscribed to everything) is where
//	   that owner may publish and of what it may read, and nothing
//	   suspended publishes.
//
// Payloads name their message ("n=<k>"), which transforms, sources and
// republish keep, so every receipt is traced to its original subject.
//
// propReceipt is a message a user got, by some path.
type propReceipt struct {
	user, via, subject, reply string
	hdr                       nats.Header
	data                      []byte
}

type propCollector struct {
	mu   sync.Mutex
	got  []propReceipt
	last time.Time
}

func (c *propCollector) add(rc propReceipt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, rc)
	c.last = time.Now()
}

// take waits until nothing has arrived for quiet, and returns and forgets
// what has.
func (c *propCollector) take(t *testing.T, quiet time.Duration) []propReceipt {
	start := time.Now()
	eventually(t, 10*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return time.Since(c.last) > quiet && time.Since(start) > quiet
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// propMsgN reads the message number of a payload, -1 when not ours.
func propMsgN(data []byte) int {
	var n int
	if _, err := fmt.Sscanf(string(data), "n=%d;", &n); err != nil {
		return -1
	}
	return n
}

// propSeeds is how many random worlds the test runs.
func propSeeds() int {
	if testing.Short() {
		return 8
	}
	return 24
}

// propBaseSeed is the first seed of a property test's worlds: def by
// default, so a run is repeatable; BUS_PROP_SEED=N picks others, and
// "random" new ones for exploring.
func propBaseSeed(t *testing.T, def uint64) uint64 {
	t.Helper()
	switch env := os.Getenv("BUS_PROP_SEED"); env {
	case "":
		return def
	case "random":
		return uint64(time.Now().UnixNano())
	default:
		base, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("BUS_PROP_SEED: %v", err)
		}
		return base
	}
}

func TestSecurityProperty(t *testing.T) {
	t.Parallel()
	base := propBaseSeed(t, 1000)
	t.Logf("base seed %d (rerun these worlds with BUS_PROP_SEED=%d, one with BUS_PROP_SEED=N -run 'TestSecurityProperty/seed=N$')", base, base)
	for i := range propSeeds() {
		seed := base + uint64(i)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			runPropWorld(t, seed)
		})
	}
}

// runPropWorld runs one random world.
func runPropWorld(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x5ec))
	w := &propWorld{t: t, r: r, users: map[string]propUser{"admin": {name: "admin"}}, orig: map[int]string{}, legit: map[int]map[string]bool{}}
	for i := range 4 {
		u := propRandomUser(r, fmt.Sprintf("u%d", i))
		w.users[u.name] = u
		w.names = append(w.names, u.name)
	}
	w.names = append(w.names, "admin")
	dir := t.TempDir()
	opts := func() server.Options {
		var users []server.User
		for _, name := range w.names {
			users = append(users, w.users[name].config())
		}
		return server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, Authorization: server.Authorization{Users: users}}
	}
	s := startBus(t, opts())
	conns := map[string]*nats.Conn{}
	js := map[string]jetstream.JetStream{}
	for _, name := range w.names {
		conns[name] = connect(t, busURL(s), nats.UserInfo(name, "p"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		var err error
		if js[name], err = jetstream.New(conns[name]); err != nil {
			t.Fatal(err)
		}
	}
	w.createAssets(js)

	col := &propCollector{}
	for _, name := range w.names {
		u := w.users[name]
		subs := u.subAllow
		if name == "admin" {
			subs = []string{">"}
		}
		for _, p := range subs {
			if _, err := conns[name].Subscribe(p, func(m *nats.Msg) {
				col.add(propReceipt{user: name, via: "core " + p, subject: m.Subject, reply: m.Reply, hdr: m.Header, data: m.Data})
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := conns[name].Flush(); err != nil {
			t.Fatal(err)
		}
	}

	w.phase(s, conns, col, "before the reload")
	victim := w.shrink()
	if err := s.Reload(opts()); err != nil {
		t.Fatal(err)
	}
	t.Logf("reload: %s now publishes %v, subscribes %v deny %v", victim.name, victim.pubAllow, victim.subAllow, victim.subDeny)
	for _, nc := range conns {
		_ = nc.Flush() // each connection takes its new rights
	}
	w.checkSuspensions(conns["admin"])
	w.phase(s, conns, col, "after the reload")
}

// createAssets creates random streams and consumers as random users, and
// checks oracle A on what the server accepts.
func (w *propWorld) createAssets(js map[string]jetstream.JetStream) {
	t, r := w.t, w.r
	ctx := ctxT(t)
	pattern := func(area string) string { return area + "." + []string{">", "1", "2", "3"}[r.IntN(4)] }
	other := func(area string) string {
		for {
			if a := propCaptureAreas[r.IntN(len(propCaptureAreas))]; a != area {
				return a
			}
		}
	}
	retarget := func(p, area string) string { return area + p[strings.IndexByte(p, '.'):] }
	owner := func() string {
		if r.IntN(6) == 0 {
			return "admin"
		}
		return w.names[r.IntN(len(w.names)-1)]
	}
	accepted, refused := 0, 0
	for i := range 9 {
		st := &propStream{name: fmt.Sprintf("S%d", i), owner: owner()}
		cfg := jetstream.StreamConfig{Name: st.name, AllowDirect: true}
		switch k := r.IntN(4); {
		case k < 2 || len(w.streams) == 0:
			area := propCaptureAreas[r.IntN(len(propCaptureAreas))]
			if r.IntN(2) == 0 { // an attack: capture what the owner may not read
				var denied []string
				for _, a := range propCaptureAreas {
					if !w.users[st.owner].mayRead(a + ".3") {
						denied = append(denied, a)
					}
				}
				if len(denied) > 0 {
					area = denied[r.IntN(len(denied))]
				}
			}
			st.subjects = []string{pattern(area)}
			cfg.Subjects = st.subjects
			if r.IntN(2) == 0 {
				st.transform = &propTransform{st.subjects[0], retarget(st.subjects[0], other(area))}
				cfg.SubjectTransform = &jetstream.SubjectTransformConfig{Source: st.transform.src, Destination: st.transform.dst}
			}
		default:
			st.mirror = k == 3
			for _, o := range r.Perm(len(w.streams))[:1+r.IntN(min(2, len(w.streams)))] {
				src := propSource{origin: o}
				ss := &jetstream.StreamSource{Name: w.streams[o].name}
				if h := w.held(w.streams[o]); len(h) > 0 && r.IntN(3) > 0 {
					y := h[r.IntN(len(h))]
					p := pattern(y[:strings.IndexByte(y, '.')])
					if r.IntN(2) == 0 {
						src.filter, ss.FilterSubject = p, p
					} else {
						src.tr = &propTransform{p, retarget(p, other(y[:strings.IndexByte(y, '.')]))}
						ss.SubjectTransforms = []jetstream.SubjectTransformConfig{{Source: src.tr.src, Destination: src.tr.dst}}
					}
				}
				st.sources = append(st.sources, src)
				if st.mirror {
					cfg.Mirror = ss
					break
				}
				cfg.Sources = append(cfg.Sources, ss)
			}
		}
		if r.IntN(5) < 3 { // often: republish reads and publishes both need checking
			src := ">"
			if h := w.held(st); len(h) > 0 && r.IntN(2) == 0 {
				y := h[r.IntN(len(h))]
				src = pattern(y[:strings.IndexByte(y, '.')])
			}
			dst := "cmd.>"
			if src != ">" {
				dst = retarget(src, "cmd")
			}
			st.republish = &propTransform{src, dst}
			cfg.RePublish = &jetstream.RePublish{Source: src, Destination: dst}
		}
		_, err := js[st.owner].CreateStream(ctx, cfg)
		if err != nil {
			refused++
			t.Logf("%s refused %s: %v", st.owner, propJSON(cfg), err)
			continue
		}
		accepted++
		t.Logf("%s created %s", st.owner, propJSON(cfg))
		w.streams = append(w.streams, st)
		if why := w.streamExceeds(st); why != "" {
			t.Errorf("oracle A: %s's stream %s accepted though %s: %s", st.owner, st.name, why, propJSON(cfg))
		}
	}
	for i := range 7 {
		if len(w.streams) == 0 {
			break
		}
		st := w.streams[r.IntN(len(w.streams))]
		c := &propConsumer{stream: st.name, name: fmt.Sprintf("C%d", i), owner: owner()}
		if h := w.held(st); len(h) > 0 && r.IntN(2) == 0 {
			y := h[r.IntN(len(h))]
			c.filter = pattern(y[:strings.IndexByte(y, '.')])
		}
		if r.IntN(2) == 0 {
			c.deliver = "cmd." + []string{"1", "2", "3"}[r.IntN(3)]
		}
		cfg := jetstream.ConsumerConfig{Durable: c.name, FilterSubject: c.filter, DeliverSubject: c.deliver, AckPolicy: jetstream.AckNonePolicy}
		if _, err := js[c.owner].CreateOrUpdateConsumer(ctx, c.stream, cfg); err != nil {
			refused++
			t.Logf("%s refused consumer on %s %s: %v", c.owner, c.stream, propJSON(cfg), err)
			continue
		}
		accepted++
		t.Logf("%s created consumer on %s %s", c.owner, c.stream, propJSON(cfg))
		w.consumers = append(w.consumers, c)
		if why := w.consumerExceeds(c); why != "" {
			t.Errorf("oracle A: %s's consumer %s on %s accepted though %s", c.owner, c.name, c.stream, why)
		}
	}
	t.Logf("%d assets accepted, %d refused", accepted, refused)
}

func propJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// shrink takes rights away from the user owning the most assets.
func (w *propWorld) shrink() propUser {
	owned := map[string]int{}
	for _, st := range w.streams {
		owned[st.owner]++
	}
	for _, c := range w.consumers {
		owned[c.owner]++
	}
	victim := w.users[w.names[w.r.IntN(len(w.names)-1)]]
	for _, name := range w.names[:len(w.names)-1] {
		if owned[name] > owned[victim.name] {
			victim = w.users[name]
		}
	}
	drop := func(entries []string) []string {
		if len(entries) == 0 {
			return entries
		}
		i := w.r.IntN(len(entries))
		return slices.Delete(slices.Clone(entries), i, i+1)
	}
	victim.subAllow = drop(victim.subAllow)
	if w.r.IntN(2) == 0 {
		victim.pubAllow = drop(victim.pubAllow)
	}
	w.users[victim.name] = victim
	return victim
}

// checkSuspensions reads which assets the server suspended, and checks
// oracle A against the new rights: what exceeds them must be suspended.
func (w *propWorld) checkSuspensions(admin *nats.Conn) {
	t := w.t
	for _, st := range w.streams {
		why := suspendedOf(t, admin, "$JS.API.STREAM.INFO."+st.name)
		st.suspended = why != ""
		if st.suspended {
			t.Logf("stream %s suspended: %s", st.name, why)
		}
		if why := w.streamExceeds(st); why != "" && !st.suspended {
			t.Errorf("oracle A: %s's stream %s not suspended though %s", st.owner, st.name, why)
		}
	}
	for _, c := range w.consumers {
		why := suspendedOf(t, admin, "$JS.API.CONSUMER.INFO."+c.stream+"."+c.name)
		c.suspended = why != ""
		if c.suspended {
			t.Logf("consumer %s.%s suspended: %s", c.stream, c.name, why)
		}
		if why := w.consumerExceeds(c); why != "" && !c.suspended {
			t.Errorf("oracle A: %s's consumer %s on %s not suspended though %s", c.owner, c.name, c.stream, why)
		}
	}
}

// phase publishes random messages as random users allowed to, waits for
// the streams to hold what the model says, reads by every path, and
// checks oracles B and C on everything received.
func (w *propWorld) phase(s *server.Server, conns map[string]*nats.Conn, col *propCollector, when string) {
	t, r := w.t, w.r
	universe := propUniverse()
	for range 24 {
		o := universe[r.IntN(len(universe))]
		var may []string
		for _, name := range w.names {
			if w.users[name].mayPublish(o) {
				may = append(may, name)
			}
		}
		pub := may[r.IntN(len(may))] // admin always may
		w.next++
		w.publish(o, w.next)
		if err := conns[pub].Publish(o, fmt.Appendf(nil, "n=%d;orig=%s", w.next, o)); err != nil {
			t.Fatal(err)
		}
		if err := conns[pub].Flush(); err != nil {
			t.Fatal(err)
		}
	}
	w.settle(conns["admin"], when)
	got := append(w.pulls(conns), w.gets(conns)...)
	// Last, so that what the admin saw of the pulls is this phase's too.
	got = append(got, col.take(t, 150*time.Millisecond)...)
	w.check(got, when)
}

// settle waits until every stream holds as many messages as the model
// says.
func (w *propWorld) settle(admin *nats.Conn, when string) {
	t := w.t
	deadline := time.Now().Add(10 * time.Second)
	for _, st := range w.streams {
		var info struct {
			State struct {
				Msgs int `json:"messages"`
			} `json:"state"`
		}
		if !waitFor(time.Until(deadline), func() bool {
			if err := json.Unmarshal(mustRequest(t, admin, "$JS.API.STREAM.INFO."+st.name, ""), &info); err != nil {
				t.Fatal(err)
			}
			return info.State.Msgs == len(st.msgs)
		}) {
			t.Fatalf("%s: stream %s holds %d messages, the model says %d", when, st.name, info.State.Msgs, len(st.msgs))
		}
	}
}

// pulls fetches from every pull consumer as a random user.
func (w *propWorld) pulls(conns map[string]*nats.Conn) []propReceipt {
	var got []propReceipt
	for _, c := range w.consumers {
		if c.deliver != "" {
			continue
		}
		user := w.names[w.r.IntN(len(w.names))]
		nc := conns[user]
		inbox := nc.NewRespInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			w.t.Fatal(err)
		}
		_ = nc.PublishRequest("$JS.API.CONSUMER.MSG.NEXT."+c.stream+"."+c.name, inbox, []byte(`{"batch":100,"expires":300000000}`))
		for {
			m, err := sub.NextMsg(time.Second)
			if err != nil || m.Header.Get("Status") != "" {
				break
			}
			got = append(got, propReceipt{user: user, via: "pull " + c.stream + "." + c.name, subject: m.Subject, reply: m.Reply, hdr: m.Header, data: m.Data})
		}
		_ = sub.Unsubscribe()
	}
	return got
}

// gets reads random stored messages by msg get and direct get as every
// user; what the server answers must be readable by the user.
func (w *propWorld) gets(conns map[string]*nats.Conn) []propReceipt {
	var got []propReceipt
	if len(w.streams) == 0 {
		return nil // every stream of this world was refused
	}
	for _, user := range w.names {
		nc := conns[user]
		for range 6 {
			st := w.streams[w.r.IntN(len(w.streams))]
			if len(st.msgs) == 0 {
				continue
			}
			body := fmt.Sprintf(`{"seq":%d}`, 1+w.r.IntN(len(st.msgs)))
			if m, err := nc.Request("$JS.API.DIRECT.GET."+st.name, []byte(body), 2*time.Second); err == nil && m.Header.Get("Status") == "" {
				got = append(got, propReceipt{user: user, via: "direct get " + st.name, subject: m.Header.Get("Nats-Subject"), hdr: m.Header, data: m.Data})
			}
			m, err := nc.Request("$JS.API.STREAM.MSG.GET."+st.name, []byte(body), 2*time.Second)
			if err != nil {
				continue
			}
			var resp struct {
				Message *struct {
					Subject string `json:"subject"`
					Data    []byte `json:"data"`
				} `json:"message"`
			}
			if json.Unmarshal(m.Data, &resp) == nil && resp.Message != nil {
				got = append(got, propReceipt{user: user, via: "msg get " + st.name, subject: resp.Message.Subject, data: resp.Message.Data})
			}
		}
	}
	return got
}

// check runs oracles B and C over what was received.
func (w *propWorld) check(got []propReceipt, when string) {
	t := w.t
	seen := 0
	for _, rc := range got {
		n := propMsgN(rc.data)
		if n < 0 {
			continue
		}
		seen++
		u := w.users[rc.user]
		if !w.mayReceive(rc.user, n) {
			t.Errorf("oracle B, %s: %s got message %d (published on %s) as %s by %s", when, rc.user, n, w.orig[n], rc.subject, rc.via)
		}
		if rc.subject != "" && !u.mayRead(rc.subject) {
			t.Errorf("oracle B, %s: %s got a message on %s, which it may not read, by %s", when, rc.user, rc.subject, rc.via)
		}
		if rc.user != "admin" {
			continue
		}
		if stream := rc.hdr.Get("Nats-Stream"); stream != "" && !strings.HasPrefix(rc.subject, "_INBOX.") && !strings.HasPrefix(rc.subject, "$JS.") && !strings.HasPrefix(rc.via, "direct") {
			st := w.stream(stream)
			switch {
			case st == nil:
				t.Errorf("oracle C, %s: a republish on %s from unknown stream %s", when, rc.subject, stream)
			case st.suspended:
				t.Errorf("oracle C, %s: suspended stream %s republished message %d to %s", when, stream, n, rc.subject)
			case !w.users[st.owner].mayPublish(rc.subject):
				t.Errorf("oracle C, %s: stream %s republished to %s, where its owner %s may not publish", when, stream, rc.subject, st.owner)
			}
		}
		if ack, ok := strings.CutPrefix(rc.reply, "$JS.ACK."); ok {
			tokens := strings.Split(ack, ".")
			var c *propConsumer
			for _, cc := range w.consumers {
				if len(tokens) > 1 && cc.stream == tokens[0] && cc.name == tokens[1] {
					c = cc
				}
			}
			owner := propUser{}
			if c != nil {
				owner = w.users[c.owner]
			}
			switch {
			case c == nil:
				t.Errorf("oracle C, %s: a delivery from unknown consumer %s", when, rc.reply)
			case c.suspended:
				t.Errorf("oracle C, %s: suspended consumer %s.%s delivered message %d", when, c.stream, c.name, n)
			case !owner.mayRead(rc.subject):
				t.Errorf("oracle C, %s: consumer %s.%s delivered %s, which its owner %s may not read", when, c.stream, c.name, rc.subject, c.owner)
			case c.deliver != "" && !owner.mayPublish(c.deliver):
				t.Errorf("oracle C, %s: consumer %s.%s delivered to %s, where its owner %s may not publish", when, c.stream, c.name, c.deliver, c.owner)
			}
		}
	}
	t.Logf("%s: %d receipts checked", when, seen)
}

// Found by TestSecurityProperty: a reload that takes away the read
// rights a stream's subject transform needs suspends the stream, and the
// transform then applied to what it captured, so a secret published
// after the reload was stored under a subject the former owner (or
// anyone who may read it) read back by msg get. Now the stream refuses
// captures while suspended so.
func TestSecurityPropertySuspendedTransformStillLaunders(t *testing.T) {
	t.Parallel()
	carol := func(secret bool) server.User {
		allow := []string{"_INBOX.>", "pub.>"}
		if secret {
			allow = append(allow, "secret.>")
		}
		return server.User{Name: "carol", Password: "c", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{"$JS.API.>", "_INBOX.>"}},
			Subscribe: &server.SubjectPermission{Allow: allow},
		}}
	}
	dir := t.TempDir()
	opts := func(secret bool) server.Options {
		return server.Options{Host: "127.0.0.1", StoreDir: dir, JetStream: true, Authorization: server.Authorization{Users: []server.User{{Name: "admin", Password: "a"}, carol(secret)}}}
	}
	s := startBus(t, opts(true))
	admin, carolJS := jsAs(t, s, "admin", "a"), jsAs(t, s, "carol", "c")
	ctx := ctxT(t)
	st, err := carolJS.CreateStream(ctx, jetstream.StreamConfig{Name: "LAUNDER", Subjects: []string{"secret.1"},
		SubjectTransform: &jetstream.SubjectTransformConfig{Source: "secret.1", Destination: "pub.1"}})
	if err != nil {
		t.Fatalf("carol may read secret.1: %v", err)
	}
	if err := s.Reload(opts(false)); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Publish(ctx, "secret.1", []byte("after the reload")); err == nil {
		t.Error("a publish captured through the suspended transform was stored")
	}
	m, err := st.GetMsg(ctx, 1)
	if err == nil {
		t.Errorf("carol, who may no longer read secret.>, read %q (published on secret.1) as %s", m.Data, m.Subject)
	}
}
