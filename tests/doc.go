// Package tests holds bus's end-to-end tests: real servers on loopback
// ports, driven through real clients (nats.go and its jetstream package,
// the nats CLI, a browser, Node), many of them against the embedded
// reference nats-server as the oracle. It has no code outside its test
// files; this file is the map.
//
// # Kinds of test, by file-name suffix
//
//   - *_diff_test.go: differential. A scenario runs against the embedded
//     reference (startReference, startReferenceWith, startReferenceServer
//     in reference_helpers_test.go) and against bus, and the outcomes are
//     compared (sameOutcomes in helpers_test.go); a difference is a bug
//     unless the test names it as deliberate.
//   - *_natscli_test.go, cli_*_test.go: the nats CLI (and the bus binary's
//     own commands) against the server.
//   - *_readme_test.go: the steps a README or docs page shows, run as
//     written, so the docs cannot drift.
//   - *_bench_test.go: benchmarks, bus beside the reference where both
//     can run it (bench_helpers_test.go). The load generator that
//     measures whole processes is tests/bench, a program of its own.
//   - *_helpers_test.go: no tests, the shared starters and assertions of
//     an area (below).
//
// # Areas, by file-name prefix
//
//   - core_, pubsub_, protocol_ (protocol_trace_: -V/-DV tracing),
//     noheaders_, mappings_, transform_, advertise_, limits_ (slow
//     consumers, stale connections, max_pending_total), lameduck_,
//     reload_: the client protocol and the core's behaviour.
//   - auth_, security_, tls_: authentication, permissions (with a model and
//     property tests), the threat model's promises, TLS.
//   - accounts_: accounts, exports and imports, JetStream per account.
//   - sys_: the system account and the $SYS requests.
//   - leaf_: leaf links to a hub cluster of reference servers.
//   - ws_: WebSocket clients and leaf links over WebSocket.
//   - msgtrace_: message tracing (Nats-Trace-Dest), against the reference
//     and through `nats trace`.
//   - jetstream_: streams, consumers, the API and its errors, KV and
//     object stores, TTLs, schedules, counters, batches, backups,
//     encryption, restarts; sourcing_: mirrors and sources, also across
//     domains and external prefixes.
//   - monitor_, metrics_, dashboard_: the HTTP endpoints against the
//     reference's documents, /metrics, the dashboard (dashboard_browser_
//     drives it in headless Chrome).
//   - faults_: kill -9 loops (also of a JetStream process and of
//     schedules), bit flips, a full or read-only disk; the store must
//     keep every acknowledged message.
//   - conf_: nats-server config files and command lines read by bus and
//     by the reference.
//   - deploy_: the Dockerfile, systemd unit and Kubernetes manifests.
//   - scale_: many connections, subjects, dedup ids, streams and files in
//     one process (measurements, below).
//   - node_: the Node client (tests/node) against bus.
//   - deps_: the package arrows of STYLE.md (go list -deps).
//
// # Gated tests
//
// These skip unless asked for:
//
//   - Measurements, which take minutes and report numbers rather than
//     assert timings: MEASURE_SCALE (scale_*), MEASURE_BACKUP
//     (jetstream_backup_measure_test.go), MEASURE_BATCH_RSS
//     (jetstream_batch_rss_test.go).
//   - Tests that need a tool the machine may not have skip without it
//     (Chromium for dashboard_browser_* and ws_browser_test.go, Node and
//     tests/node's modules for node_client_test.go); with
//     REQUIRE_BROWSER_TESTS=1 or REQUIRE_NODE_TESTS=1 (CI) they fail
//     instead.
//
// # Helpers
//
// main_test.go: TestMain (goleak over the whole run) and the one way to
// wait for a state: eventually (fails the test) over waitFor (reports,
// for a differential scenario that records the outcome either way).
// helpers_test.go: startBus, connect, raw protocol connections,
// sameOutcomes. reference_helpers_test.go: every start of the reference.
// process_helpers_test.go: the bus binary, built once, and starting it as
// a process. The area helpers (accounts_, auth_, faults_, jetstream_bench_,
// jetstream_restart_, leaf_, monitor_, sys_, tls_) build on those.
package tests
