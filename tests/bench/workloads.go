package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// drainTimeout is how long a subscriber may take to receive the rest of
// its messages after the publisher is done. Core NATS drops messages for
// a slow consumer, and `nats bench sub` then waits forever; this turns
// that into a failed run.
const drainTimeout = 30 * time.Second

// env is what one run of a scenario gets: a fresh server and the tools.
type env struct {
	flavor string // the flavor name of srv
	srv    *server
	tools  tools
	dir    string   // scratch directory of this run
	cmds   []string // what the run executed, for docs/benchmarks.md
	start  usage    // the server's counters when the measured part began
}

// beginMeasure (re)starts the measured part of the run: the server's CPU
// time and I/O from here to the end of the scenario are the run's cost.
// The runner calls it before the scenario starts; scenarios with a setup
// phase (filling a stream, subscribing) call it again once setup is done,
// so that the cost covers the messages the scenario counts and no others.
func (e *env) beginMeasure() error {
	u, err := e.readUsage()
	if err != nil {
		return err
	}
	e.start = u
	return nil
}

// endMeasure is the server's cost since the last beginMeasure.
func (e *env) endMeasure() (cost, error) {
	u, err := e.readUsage()
	if err != nil {
		return cost{}, err
	}
	return costBetween(e.start, u), nil
}

// readUsage snapshots the server's counters, with bus's fsyncs from its
// /metrics (only JetStream runs fsync, and only bus counts them).
func (e *env) readUsage() (usage, error) {
	u, err := readUsage(e.srv.cmd.Process.Pid)
	if err != nil {
		return usage{}, fmt.Errorf("measure %s: %w", e.flavor, err)
	}
	u.fsyncs = -1
	if e.flavor == "bus" && e.srv.jetstream {
		if u.fsyncs, err = scrapeFsyncs(e.srv.httpURL); err != nil {
			return usage{}, fmt.Errorf("measure %s: %w", e.flavor, err)
		}
	}
	return u, nil
}

// startNatsAs starts `nats -s <url> args...` in the background, as user
// of the accounts block (accounts.go); "" for no credentials.
func (e *env) startNatsAs(ctx context.Context, user string, args ...string) (*tool, error) {
	argv := []string{e.tools.nats, "-s", e.srv.url}
	shown := "nats -s $URL "
	if user != "" {
		argv = append(argv, "--user", user, "--password", accountsPassword)
		shown += "--user " + user + " --password " + accountsPassword + " "
	}
	argv = append(argv, args...)
	e.note(shown + strings.Join(args, " "))
	return startTool(ctx, e.dir, nil, argv...)
}

// runNats runs `nats -s <url> args...` to completion.
func (e *env) runNats(ctx context.Context, args ...string) (string, error) {
	return e.runNatsAs(ctx, "", args...)
}

// runNatsAs is runNats as user of the accounts block (startNatsAs).
func (e *env) runNatsAs(ctx context.Context, user string, args ...string) (string, error) {
	t, err := e.startNatsAs(ctx, user, args...)
	if err != nil {
		return "", err
	}
	return t.wait()
}

// note records a step for the "commands" section of the report.
func (e *env) note(step string) { e.cmds = append(e.cmds, step) }

// pubSub measures core NATS delivery: subClients `nats bench sub` clients,
// each expecting n messages, start first; then pubClients publishers send
// n messages in total. The result is the subscribers' aggregated rate.
type pubSub struct {
	subject      string
	n, size      int
	subClients   int
	pubClients   int
	multisubject bool // publish across subject.000000 … subject.099999
	// pubUser and subUser are users of the accounts block (accounts.go):
	// the same for one account's traffic, the exporter's and the
	// importer's for a stream import hop; "" without accounts.
	pubUser, subUser string
}

func (p pubSub) run(ctx context.Context, e *env) ([]float64, error) {
	base, err := e.srv.subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	common := []string{"--msgs", strconv.Itoa(p.n), "--size", strconv.Itoa(p.size), "--no-progress"}
	if p.multisubject {
		common = append(common, "--multisubject")
	}
	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	sub, err := e.startNatsAs(subCtx, p.subUser, append([]string{"bench", "sub", p.subject, "--clients", strconv.Itoa(p.subClients)}, common...)...)
	if err != nil {
		return nil, err
	}
	if err := e.srv.waitSubscriptions(ctx, base+p.subClients); err != nil {
		cancelSub()
		out, _ := sub.wait()
		return nil, fmt.Errorf("%w\n%s", err, lastLines(out, 5))
	}
	pubArgs := append([]string{"bench", "pub", p.subject, "--clients", strconv.Itoa(p.pubClients)}, common...)
	if p.multisubject {
		pubArgs = append(pubArgs, "--multisubjectmax", "100000")
	}
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	if _, err := e.runNatsAs(ctx, p.pubUser, pubArgs...); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(drainTimeout, cancelSub)
	defer timer.Stop()
	out, err := sub.wait()
	if err != nil {
		return nil, fmt.Errorf("subscriber did not get all %d messages within %v of the publisher's end (slow consumer?): %w", p.n, drainTimeout, err)
	}
	st, err := parseBench(out, "Core NATS subscriber")
	if err != nil {
		return nil, err
	}
	return []float64{st.rate}, nil
}

// queue measures a queue group: `members` nats.go subscribers in this
// process share the n messages of one `nats bench pub`.
type queue struct {
	n, size, members int
}

func (q queue) run(ctx context.Context, e *env) ([]float64, error) {
	e.note(fmt.Sprintf("(in process) %d nats.go connections, QueueSubscribe(\"bench.queue\", \"workers\"), counting %d deliveries in total", q.members, q.n))
	g, err := joinQueueGroup(ctx, e.srv.url, "bench.queue", q.members, int64(q.n))
	if err != nil {
		return nil, err
	}
	defer g.close()
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	if _, err := e.runNats(ctx, "bench", "pub", "bench.queue", "--msgs", strconv.Itoa(q.n), "--size", strconv.Itoa(q.size), "--no-progress"); err != nil {
		return nil, err
	}
	drainCtx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	rate, err := g.rate(drainCtx)
	if err != nil {
		return nil, err
	}
	return []float64{rate}, nil
}

// requestReply runs one `nats bench service serve` and a requester with
// `clients` concurrent clients: rate, P50 and P99 round trip.
type requestReply struct {
	n, size, clients int
	// serveUser and requestUser are users of the accounts block: the
	// exporter's and the importer's for a service import hop.
	serveUser, requestUser string
}

func (r requestReply) run(ctx context.Context, e *env) ([]float64, error) {
	base, err := e.srv.subscriptions(ctx)
	if err != nil {
		return nil, err
	}
	srvCtx, stop := context.WithCancel(ctx)
	defer stop()
	svc, err := e.startNatsAs(srvCtx, r.serveUser, "bench", "service", "serve", "bench.service", "--no-progress")
	if err != nil {
		return nil, err
	}
	defer func() { stop(); _, _ = svc.wait() }()
	if err := e.srv.waitSubscriptions(ctx, base+1); err != nil {
		return nil, err
	}
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	out, err := e.runNatsAs(ctx, r.requestUser, "bench", "service", "request", "bench.service", "--msgs", strconv.Itoa(r.n),
		"--size", strconv.Itoa(r.size), "--clients", strconv.Itoa(r.clients), "--no-progress")
	if err != nil {
		return nil, err
	}
	st, err := parseBench(out, "Core NATS service requester")
	if err != nil {
		return nil, err
	}
	return []float64{st.rate, st.p50, st.p99}, nil
}

// interestGraph installs `subs` subscriptions (literals and wildcards that
// share the published subjects' first token) on a few connections that
// discard their deliveries, then measures a pubSub across 100k subjects.
type interestGraph struct {
	subs  int
	conns int
	flow  pubSub
}

func (g interestGraph) run(ctx context.Context, e *env) ([]float64, error) {
	e.note(fmt.Sprintf("(in process) %d raw connections that discard deliveries, %d subscriptions in total: graph.K, graph.K.>, *.K and other.K.* for K = %06d…%06d",
		g.conns, g.subs, 0, (g.subs-1)/4))
	sets := make([][]string, g.conns)
	for i := range g.subs {
		sets[i%g.conns] = append(sets[i%g.conns], interestPattern(i))
	}
	conns, err := subscribeMany(ctx, e.srv.addr, sets)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	for _, rc := range conns {
		rc.drain()
	}
	return g.flow.run(ctx, e)
}

// interestPattern is subscription i of the interest graph. Published
// subjects are graph.000000 … graph.099999; a quarter of the patterns
// match one subject each, a quarter match through a leading wildcard, and
// half walk the same trie levels without matching.
func interestPattern(i int) string {
	k := fmt.Sprintf("%06d", (i/4)%100000)
	switch i % 4 {
	case 0:
		return "graph." + k
	case 1:
		return "graph." + k + ".>"
	case 2:
		return "*." + k
	default:
		return "other." + k + ".*"
	}
}

// idleConns reports the server's RSS when idle and after n connections
// that did CONNECT and PING and then sit idle.
type idleConns struct {
	n         int
	websocket bool // through the websocket listener (dialWS)
	mqtt      bool // MQTT connections to the MQTT listener (dialMQTT)
}

func (c idleConns) run(ctx context.Context, e *env) ([]float64, error) {
	kind, addr, dial := "TCP", e.srv.addr, dialRaw
	if c.websocket {
		kind, addr, dial = "WebSocket (upgrade, then)", e.srv.wsURL, dialWS
	}
	handshake := "CONNECT, PING, wait for PONG"
	if c.mqtt {
		kind, addr, dial, handshake = "MQTT", e.srv.mqttAddr, dialMQTT, "CONNECT (3.1.1, clean session, no keepalive), wait for CONNACK"
	}
	e.note(fmt.Sprintf("(in process) %d raw %s connections: %s; then VmRSS from /proc/<pid>/status", c.n, kind, handshake))
	idle, err := e.srv.rss()
	if err != nil {
		return nil, err
	}
	conns, err := openIdle(ctx, addr, c.n, 8, dial)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	loaded, err := e.srv.rss()
	if err != nil {
		return nil, err
	}
	return []float64{mib(idle), mib(loaded)}, nil
}

// manySubs reports the server's RSS after n literal subscriptions spread
// over a few connections.
type manySubs struct{ n, conns int }

func (m manySubs) run(ctx context.Context, e *env) ([]float64, error) {
	e.note(fmt.Sprintf("(in process) %d raw connections, %d SUBs in total on mem.<conn>.<i/1000>.<i%%1000>, PING/PONG; then VmRSS", m.conns, m.n))
	sets := make([][]string, m.conns)
	for i := range m.n {
		c := i % m.conns
		j := i / m.conns
		sets[c] = append(sets[c], fmt.Sprintf("mem.%d.%d.%d", c, j/1000, j%1000))
	}
	conns, err := subscribeMany(ctx, e.srv.addr, sets)
	if err != nil {
		return nil, err
	}
	defer closeAll(conns)
	rss, err := e.srv.rss()
	if err != nil {
		return nil, err
	}
	return []float64{mib(rss)}, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// jsPublish runs `nats bench js pub sync|async` against a new file stream.
type jsPublish struct {
	mode    string // "sync" or "async"
	n, size int
	// busDurability, when set, has bus's stream created beforehand with
	// this x_bus_durability instead of by the tool with bus's default.
	busDurability string
}

func (p jsPublish) run(ctx context.Context, e *env) ([]float64, error) {
	args := []string{"bench", "js", "pub", p.mode, "bench.js", "--storage", "file",
		"--msgs", strconv.Itoa(p.n), "--size", strconv.Itoa(p.size), "--no-progress"}
	if p.busDurability != "" && e.flavor == "bus" {
		e.note(fmt.Sprintf(`(in process) request $JS.API.STREAM.CREATE.benchstream {"subjects":["bench.js"],"storage":"file",…,"x_bus_durability":%q}`, p.busDurability))
		if err := createStream(ctx, e.srv.url, "benchstream", "bench.js", p.busDurability); err != nil {
			return nil, err
		}
	} else {
		args = append(args, "--create")
	}
	out, err := e.runNats(ctx, args...)
	if err != nil {
		return nil, err
	}
	role := "JetStream synchronous publisher"
	if p.mode == "async" {
		role = "JetStream asynchronous publisher"
	}
	st, err := parseBench(out, role)
	if err != nil {
		return nil, err
	}
	return []float64{st.rate}, nil
}

// jsConsume fills a file stream with n messages (not measured), then
// measures one consumer kind reading them all.
type jsConsume struct {
	kind    string // "fetch", "consume" or "ordered"
	n, size int
}

// role is the label `nats bench js <kind>` prints on its stats line.
func (c jsConsume) role() string {
	switch c.kind {
	case "fetch":
		return "JetStream durable consumer (fetch)"
	case "consume":
		return "JetStream durable consumer (callback)"
	default:
		return "JetStream ordered ephemeral consumer"
	}
}

func (c jsConsume) run(ctx context.Context, e *env) ([]float64, error) {
	if _, err := e.runNats(ctx, "bench", "js", "pub", "async", "bench.js", "--create", "--storage", "file",
		"--msgs", strconv.Itoa(c.n), "--size", strconv.Itoa(c.size), "--no-progress"); err != nil {
		return nil, fmt.Errorf("fill stream: %w", err)
	}
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	out, err := e.runNats(ctx, "bench", "js", c.kind, "--msgs", strconv.Itoa(c.n), "--no-progress")
	if err != nil {
		return nil, err
	}
	st, err := parseBench(out, c.role())
	if err != nil {
		return nil, err
	}
	return []float64{st.rate}, nil
}
