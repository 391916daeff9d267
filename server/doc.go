// Package server is the protocol core: it accepts NATS client
// connections, parses the text protocol, routes messages through the
// wildcard trie to subscribers and queue groups, and answers requests
// nobody listens to with the no-responders status. Persistent streams
// live in server/jetstream; this package starts that service and gives
// it the calls it needs (jetstream.Core, implemented by jetstreamCore in
// internal.go), and nothing else.
//
// Accounts (account.go) are subject spaces: the global account, the
// system account (sysaccount.go) and those of Options.Accounts, each with
// its own trie, mappings and limits, and, with a jetstream key, its own
// jetstream.Service over its own trie and store directory (accountjs.go).
// A connection's account is set once it authenticates (conn.acc and
// conn.trie); the router only ever matches in conn.trie. The configured
// accounts are an immutable map that Reload swaps (Server.accounts),
// keeping each account still configured, with its trie.
//
// Operator mode (Options.Operator; operator.go) verifies the operator's
// and the accounts' JWTs at New and Reload and turns each account JWT
// into an Account named by its public key (jwtaccounts.go), so JWT
// accounts are served by the same machinery; users authenticate with
// their user JWT and a signed nonce (jwtauth.go), within their JWT's
// src and times (jwtwindow.go).
//
// The auth callout (Authorization.Callout, or an account JWT's
// authorization in operator mode; authcallout*.go) asks a service about
// a client at CONNECT: the client's reader publishes a request signed by
// the server's nkey (Server.kp, whose public key is the server id) to
// $SYS.REQ.USER.AUTH in the callout account, optionally sealed with
// Server.xkp, and waits, at most the auth timeout, on an internal inbox
// subscription for the answer. Only that client waits; no goroutine is
// started and no lock is held while it does.
//
// Monitoring over HTTP (the endpoints, /metrics, the dashboard) is
// server/monitor. This package builds its documents (varz.go, connz.go,
// subsz.go, healthz.go, leafz.go, accountz.go, jsz.go, with the closed
// connections of closedconns.go), aliases their types (Varz =
// monitor.Varz, …) and serves them through monitor.Source, implemented
// by monitorSource in monitorsource.go. The HTTP login is
// authenticator.httpLogin (dashboardlogin.go): passwords never leave
// this package.
//
// Protocol tracing (trace.go: each connection's ops and frames logged at
// LevelTrace) and message tracing (msgtrace.go: Nats-Trace-Dest events,
// Nats-Trace-Only) cost one branch each where an op is handled and where
// a message is queued; the rest of their code runs only when asked for.
//
// # Goroutines
//
//   - acceptLoop: one per TCP listener (clients, and MQTT when its block
//     is set), started by Start, accepts connections.
//   - Per connection exactly two: the reader (readLoop) reads into a
//     buffer, feeds the parser and acts on each op; publishing appends to
//     each matching subscriber's outbound queue and, once the read is
//     processed, hands it over. The writer (writeLoop) sleeps until woken,
//     takes everything queued and writes it in one call. A short queue
//     whose writer is idle the reader writes itself, with one
//     non-blocking write on a plain TCP socket, and leaves what the socket
//     does not take to the writer (inline.go): the reader never waits on
//     a socket and never blocks on another client. With TLS the reader
//     goroutine starts as serveTLS, which does the handshake and then
//     starts the writer (tls.go). A connection refused for max_connections
//     gets one short-lived goroutine that writes why and hangs up (refuse
//     in server.go).
//   - Per connection timers, not goroutines: the ping timer (conn.go) and
//     the auth timer until CONNECT (connauth.go) are time.AfterFunc, as
//     is the user JWT's expiry timer (jwtauth.go), which also fires as
//     the JWT's times range ends (jwtwindow.go).
//     A service import's response subscription with a response threshold
//     is removed by a time.AfterFunc too (imports.go), which also reports
//     a latency-tracked request that got no answer (latency.go).
//   - shedder: one, with max_pending_total (shed.go), woken when the
//     outbound queues together go over it; it closes the longest.
//   - Leaf links (leaflink.go): one supervisor per remote (leafLink.run)
//     that dials, redials and rests after a loop; a link that is up is a
//     connection with the reader and writer above. A ws:// or wss:// remote
//     (leafws.go) is dialed the same way from the supervisor.
//   - The WebSocket listener's, with a websocket block (ws.go): net/http's
//     serve loop (in Server.wg) and one goroutine per socket until its
//     upgrade, which then becomes an ordinary connection with the two
//     goroutines above over the library's stream (github.com/coder/websocket
//     reads and writes frames inside the reader's and writer's calls; it
//     starts no goroutine of its own per connection). wsState's sockets
//     and handlers wait groups count them; stopWebSocket closes the
//     listener and waits for both.
//   - The MQTT listener's, with an mqtt block (mqtt.go): one accept loop
//     (in Server.wg); each MQTT client is an ordinary connection with the
//     two goroutines above, whose reader is mqttReadLoop (mqttconn.go:
//     MQTT packets through server/mqtt's Reader) and whose queue frames
//     deliveries as PUBLISH packets (mqttout.go). A client id taken over
//     within a second holds its reader for that second before closing.
//     Retained messages (mqttretain*.go) start no goroutine of their
//     own: a retained PUBLISH's reader waits for the store's ack, a
//     SUBSCRIBE's reader pulls the matching records from an ephemeral
//     consumer and queues them, and a retained will is stored by the
//     goroutine that closes the connection.
//     With JetStream, the reader makes the JetStream requests of QoS 1 and
//     sessions itself (mqttjs.go, through localRequestIn) and waits for
//     their replies; stored QoS 1 deliveries come on JetStream's
//     goroutines, through server-owned subscriptions on the consumers'
//     deliver subjects (mqttqos.go). A clean session's close removes its
//     consumers and record on one goroutine per close, in Server.wg
//     (mqttStored.unbind).
//   - The monitoring front end's, when enabled (see server/monitor): its
//     serve loops and history sampler, which Shutdown stops and waits
//     for (monitor.Server.Shutdown) before JetStream stops. They call
//     into this package only through monitorSource.
//   - JetStream's own (see server/jetstream), one service per account
//     with JetStream (accountjs.go): its handlers run on the publishing
//     connection's reader goroutine, copy what they keep and hand it to
//     JetStream's goroutines through channels.
//   - The NATS resolver's (resolverreq.go), with a full or cache
//     resolver and a system account: one goroutine (runResolver) that
//     serves the $SYS.REQ.CLAIMS.* requests handed to it over a bounded
//     channel, alone writing the JWT store and applying updates, until
//     Server.quit. The first activation token to expire arms one
//     time.AfterFunc (resolver.go) that compiles the accounts again.
//   - Accounts, imports and message tracing start none: an imported
//     publish is routed again on the publisher's reader (imports.go), and
//     a traced one is traced there as it is routed (msgtrace.go).
//
// Server.wg counts every goroutine the server started itself; Shutdown
// waits for all of them (the front end and JetStream wait for their own).
//
// # Ownership and locks
//
//   - Server.mu guards the listener, the monitoring front end's handle,
//     the connection map and the shutdown and lame-duck flags. Start holds
//     it while the front end starts, which takes the front end's own lock
//     (Server.mu → monitor.Server.mu); otherwise it is released before any
//     call into the front end, whose handlers take Server.mu only through
//     monitorSource, holding none of theirs. An upgrade handler takes
//     Server.mu (to admit the connection), so nothing waits for the
//     handlers while holding it.
//   - Server.reloadMu lets one Reload, or one account JWT update
//     (applyAccountJWTs), run at a time; it is taken first, and guards
//     the installed imports, each account's noJetStream subscription and
//     the activation timer. An account's mappings are an atomic pointer
//     (liveMappings) that a reload swaps; publishers load it. The JWT store's
//     own lock (jwtStore.mu) is taken alone.
//     Server.jsStop stops JetStream once, from LameDuck or Shutdown.
//   - Server.accounts is an atomic pointer to an immutable account set
//     that Reload swaps whole (account.go); readers load it with no lock.
//   - conn.mu guards a connection's subscription map, its account
//     (conn.acc, conn.trie, conn.counted; the reader changes them under it
//     and reads them freely) and what /connz shows of it (conn.desc).
//   - The trie guards itself (subjects.Trie), and is taken after conn.mu.
//   - interestWatchers.mu guards the watched deliver subjects; it is
//     taken after conn.mu (a SUB or UNSUB tells the watchers while holding
//     its connection's lock) and the notify functions under it only
//     signal a channel.
//   - leafInterest.mu guards what leaf links announce and the joined
//     links; it is taken after conn.mu (a subscription change is announced
//     under its connection's lock) and only queues LS+/LS- on the links'
//     outbound queues. leafLink.mu guards a link's URLs and its current
//     connection, and is taken after Server.mu (leafLink.up) or alone.
//   - msgTrace.mu guards one traced publish's event, which a stream may
//     complete from JetStream's goroutines; it is taken alone, or after a
//     delivery target's conn.mu has been released.
//   - closedRing.mu guards the ring of closed connections (closedconns.go),
//     taken alone. monitorState.mu guards the CPU sample of /varz and is
//     taken alone.
//   - mqttState.mu guards the MQTT client ids and their connections; it
//     is taken alone (a takeover closes the older connection after
//     releasing it, and close releases the id under it alone).
//     mqttRetainedSet.mu (the accounts' retained messages) and each
//     mqttRetained.mu (one account's index) are taken alone, never
//     across a request to JetStream.
//   - mqttJS.mu guards an account's MQTT sessions by client id, taken
//     alone; mqttJS.setup is held across the requests that create the
//     MQTT streams, once, and nothing is taken under it but what a
//     request takes. mqttStored.mu guards one session's state (its
//     subscriptions, consumers, pending packet ids), taken alone or under
//     mqttAckPipe.mu (a connection's QoS 1 stores in flight, which is
//     taken alone otherwise, and before outbound.mu): it is released
//     before a JetStream request, a route or queueing a PUBLISH.
//   - outbound.mu (outbound.go) guards a connection's queue; it is the
//     innermost lock, never held while taking another.
//
// No lock is held across network I/O.
//
// Lock order: Server.reloadMu → Server.mu → conn.mu → (interestWatchers.mu
// | leafInterest.mu) → outbound.mu; Server.mu → leafLink.mu; Server.mu →
// monitor.Server.mu (at Start only).
package server
