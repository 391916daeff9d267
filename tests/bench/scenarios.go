package main

import (
	"context"
	"strconv"
	"time"
)

// metric is one row of the table that a scenario fills.
type metric struct {
	label         string // appended to the scenario name; "" for a single metric
	unit          string // "msgs/s", "µs", "MiB"
	lowerIsBetter bool   // latency and memory; throughput is higher-is-better
}

// scenario is one workload, run on a fresh server per run. run returns
// one value per metric, in order.
type scenario struct {
	name      string
	jetstream bool          // needs JetStream; the reference gets -js
	websocket bool          // both servers get a websocket listener (-c with a websocket block)
	mqtt      bool          // an MQTT scenario: both servers get an MQTT listener, and mosquitto runs it too
	accounts  int           // both servers get an accounts block of this many accounts and an importer (accounts.go)
	timeout   time.Duration // bounds one run, server start to stop
	metrics   []metric
	// msgs is how many messages the measured part of a run moves: what
	// its publishers send, or for the JetStream consumers what they read
	// (a request counts once, a fan-out message once however many get
	// it). It divides the per-message costs; 0 for the memory scenarios,
	// which move none.
	msgs int
	run  func(ctx context.Context, e *env) ([]float64, error)
}

// sizes scales message counts: the default set aims at about two seconds
// per run on a 2-core machine, the quick set at well under one.
type sizes struct {
	core, large, fanout, queue, reqrep, interest, jsSync, jsAsync, ws int // messages
	mqtt, mqttQoS1                                                    int // messages
	accounts                                                          int // configured accounts of the idle-memory row
	idleConns, memSubs                                                int
	quick                                                             bool
}

func sizesFor(quick bool) sizes {
	if quick {
		return sizes{core: 200_000, large: 2_000, fanout: 50_000, queue: 100_000, ws: 100_000,
			reqrep: 2_000, interest: 100_000, jsSync: 2_000, jsAsync: 50_000, mqtt: 50_000, mqttQoS1: 5_000, accounts: 1_000,
			idleConns: 5_000, memSubs: 250_000, quick: true}
	}
	return sizes{core: 1_000_000, large: 10_000, fanout: 200_000, queue: 500_000, ws: 500_000,
		reqrep: 10_000, interest: 500_000, jsSync: 10_000, jsAsync: 200_000, mqtt: 200_000, mqttQoS1: 20_000, accounts: 1_000,
		idleConns: 10_000, memSubs: 1_000_000}
}

// scenarios is the suite, in the order of the table. The quick set skips
// the rows marked full-only: one payload size per decade, one interval
// durability row, no push-style JetStream consumers.
func scenarios(s sizes) []scenario {
	const minute = time.Minute
	throughput := []metric{{unit: "msgs/s"}}
	var list []scenario
	add := func(fullOnly bool, sc scenario) {
		if sc.timeout == 0 {
			sc.timeout = minute
		}
		if !fullOnly || !s.quick {
			list = append(list, sc)
		}
	}
	core := func(fullOnly bool, name string, p pubSub) {
		add(fullOnly, scenario{name: name, metrics: throughput, msgs: p.n, run: p.run})
	}
	core(false, "pub→sub 16 B", pubSub{subject: "bench.core", n: s.core, size: 16, subClients: 1, pubClients: 1})
	core(true, "pub→sub 128 B", pubSub{subject: "bench.core", n: s.core, size: 128, subClients: 1, pubClients: 1})
	core(false, "pub→sub 1 KiB", pubSub{subject: "bench.core", n: s.core / 2, size: 1024, subClients: 1, pubClients: 1})
	core(false, "pub→sub 64 KiB", pubSub{subject: "bench.core", n: s.large, size: 64 << 10, subClients: 1, pubClients: 1})
	core(false, "fan-out 1→10, 16 B", pubSub{subject: "bench.fanout", n: s.fanout, size: 16, subClients: 10, pubClients: 1})
	add(false, scenario{name: "queue group 1→5, 16 B", metrics: throughput, msgs: s.queue, run: queue{n: s.queue, size: 16, members: 5}.run})
	core(false, "4 pubs→1 sub, 16 B", pubSub{subject: "bench.many", n: s.core, size: 16, subClients: 1, pubClients: 4})
	add(false, scenario{name: "request-reply 128 B, 1 client", msgs: s.reqrep,
		metrics: []metric{{unit: "msgs/s"}, {label: "p50", unit: "µs", lowerIsBetter: true}, {label: "p99", unit: "µs", lowerIsBetter: true}},
		run:     requestReply{n: s.reqrep, size: 128, clients: 1}.run})
	add(false, scenario{name: "interest graph 100k subs, 16 B", timeout: 2 * minute, metrics: throughput, msgs: s.interest,
		run: interestGraph{subs: 100_000, conns: 4, flow: pubSub{subject: "graph", n: s.interest, size: 16, subClients: 1, pubClients: 1, multisubject: true}}.run})
	add(false, scenario{name: "RSS",
		metrics: []metric{{label: "idle", unit: "MiB", lowerIsBetter: true}, {label: count(s.idleConns) + " idle conns", unit: "MiB", lowerIsBetter: true}},
		run:     idleConns{n: s.idleConns}.run})
	add(false, scenario{name: "RSS " + count(s.memSubs) + " subs", timeout: 2 * minute,
		metrics: []metric{{unit: "MiB", lowerIsBetter: true}}, run: manySubs{n: s.memSubs, conns: 4}.run})
	ws := func(fullOnly bool, name string, p wsPubSub) {
		add(fullOnly, scenario{name: name, websocket: true, metrics: throughput, msgs: p.n, run: p.run})
	}
	ws(false, "WebSocket pub→sub 16 B", wsPubSub{n: s.ws, size: 16})
	ws(false, "WebSocket pub→sub 16 B, compressed", wsPubSub{n: s.ws, size: 16, compression: true})
	ws(false, "WebSocket pub→sub 1 KiB", wsPubSub{n: s.ws / 2, size: 1024})
	ws(false, "WebSocket pub→sub 1 KiB, compressed", wsPubSub{n: s.ws / 2, size: 1024, compression: true})
	add(false, scenario{name: "RSS WebSocket", websocket: true,
		metrics: []metric{{label: "idle", unit: "MiB", lowerIsBetter: true}, {label: count(s.idleConns) + " idle conns", unit: "MiB", lowerIsBetter: true}},
		run:     idleConns{n: s.idleConns, websocket: true}.run})
	mqtt := func(fullOnly bool, name string, p mqttPubSub) {
		add(fullOnly, scenario{name: name, jetstream: true, mqtt: true, metrics: throughput, msgs: p.n, run: p.run})
	}
	mqtt(false, "MQTT QoS 0 pub→sub 16 B", mqttPubSub{n: s.mqtt, size: 16})
	mqtt(true, "MQTT QoS 0 pub→sub 1 KiB", mqttPubSub{n: s.mqtt / 2, size: 1024})
	mqtt(false, "MQTT QoS 1 pub→sub 16 B", mqttPubSub{n: s.mqttQoS1, size: 16, qos: 1})
	add(false, scenario{name: "RSS MQTT", jetstream: true, mqtt: true,
		metrics: []metric{{label: "idle", unit: "MiB", lowerIsBetter: true}, {label: count(s.idleConns) + " idle conns", unit: "MiB", lowerIsBetter: true}},
		run:     idleConns{n: s.idleConns, mqtt: true}.run})
	acc := func(fullOnly bool, name string, accounts int, p pubSub) {
		add(fullOnly, scenario{name: name, accounts: accounts, metrics: throughput, msgs: p.n, run: p.run})
	}
	acc(false, "accounts: pub→sub 16 B, 1 account", 1, pubSub{subject: "bench.accounts", n: s.core, size: 16, subClients: 1, pubClients: 1, pubUser: "u0", subUser: "u0"})
	acc(false, "accounts: pub→sub 16 B, 100 accounts", 100, pubSub{subject: "bench.accounts", n: s.core, size: 16, subClients: 1, pubClients: 1, pubUser: "u0", subUser: "u0"})
	acc(false, "accounts: fan-out 1→10, 16 B, 100 accounts", 100, pubSub{subject: "bench.fanout", n: s.fanout, size: 16, subClients: 10, pubClients: 1, pubUser: "u0", subUser: "u0"})
	acc(false, "accounts: stream import hop 16 B", 1, pubSub{subject: "bench.import", n: s.core, size: 16, subClients: 1, pubClients: 1, pubUser: "u0", subUser: "imp"})
	add(false, scenario{name: "accounts: service import request-reply 128 B", accounts: 1, msgs: s.reqrep,
		metrics: []metric{{unit: "msgs/s"}, {label: "p50", unit: "µs", lowerIsBetter: true}, {label: "p99", unit: "µs", lowerIsBetter: true}},
		run:     requestReply{n: s.reqrep, size: 128, clients: 1, serveUser: "u0", requestUser: "imp"}.run})
	add(false, scenario{name: "RSS idle, " + count(s.accounts) + " accounts", accounts: s.accounts,
		metrics: []metric{{unit: "MiB", lowerIsBetter: true}}, run: idleRSS})
	js := func(fullOnly bool, name string, msgs int, run func(context.Context, *env) ([]float64, error)) {
		add(fullOnly, scenario{name: name, jetstream: true, metrics: throughput, msgs: msgs, run: run})
	}
	js(false, "JS pub sync 128 B", s.jsSync, jsPublish{mode: "sync", n: s.jsSync, size: 128}.run)
	js(true, "JS pub sync 128 B, bus durability=interval", s.jsSync, jsPublish{mode: "sync", n: s.jsSync, size: 128, busDurability: "interval"}.run)
	js(false, "JS pub async 128 B", s.jsAsync, jsPublish{mode: "async", n: s.jsAsync, size: 128}.run)
	js(false, "JS pub async 128 B, bus durability=interval", s.jsAsync, jsPublish{mode: "async", n: s.jsAsync, size: 128, busDurability: "interval"}.run)
	js(false, "JS fetch 128 B", s.jsAsync, jsConsume{kind: "fetch", n: s.jsAsync, size: 128}.run)
	js(true, "JS consume 128 B", s.jsAsync, jsConsume{kind: "consume", n: s.jsAsync, size: 128}.run)
	js(true, "JS ordered 128 B", s.jsAsync, jsConsume{kind: "ordered", n: s.jsAsync, size: 128}.run)
	return list
}

// count names a round number the way the table does: 10k, 1M.
func count(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}
