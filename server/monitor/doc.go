// Package monitor is the monitoring front end on the HTTP port: the
// nats-server endpoints (/varz, /connz, /subsz, /jsz, /healthz, /leafz,
// /accountz, /accstatz, /routez, /gatewayz), /metrics for Prometheus,
// and the web dashboard at "/" with its JSON, its actions and its sampled
// history (docs/monitoring.md, docs/metrics.md, docs/dashboard.md). It
// also defines the documents those endpoints write (Varz, Connz, …),
// which the server builds and aliases for its own callers.
//
// # The seam
//
// Everything the monitor knows of the server comes through Source,
// defined here and implemented by the server (server/monitorsource.go),
// as jetstream.Core is the seam JetStream defines:
//
//   - the document builders (Varz, Connz, Subsz, Healthz, Leafz,
//     Accountz, AccountStatz, Routez, Gatewayz; Jsz is JetStream's own
//     document, written as it is); Connz also feeds the dashboard's
//     connection list (dashboardconns.go);
//   - Counters, the totals /metrics and the dashboard read, and
//     JetStream, a snapshot in this package's types (no jetlog type);
//   - AuthRequired and Authenticate, the HTTP Basic login: the server
//     compares the password and hands back Rights, so the monitor never
//     sees a password or a token; ServerRights for its own reads;
//   - Request, the API request ($JS.API.…, $BUS.API.…) a message read
//     or an action makes, with the logged-in user's Rights, so the
//     dashboard meets the checks a client's request meets.
//
// The monitor imports nothing of this module (tests/deps_test.go): not
// the server, not JetStream, not the storage. Of the server's packages
// it alone imports Prometheus's libraries.
//
// # Goroutines
//
// New starts nothing. Start starts one serve loop per listener (HTTP,
// HTTPS) and the history sampler (dashboardlag.go), which samples every
// lagInterval until the HTTP server shuts down; handlers run on the HTTP
// server's own goroutines, several at once. Shutdown stops the HTTP
// server, which cancels the sampler's context (an in-flight Request
// ends with it), and waits for the serve loops and the sampler (wg).
//
// # Locks
//
// Server.mu guards the listeners and the HTTP server; Server.reqMu the
// request counts; lagRing.mu the history. None is held while another is
// taken, nor across a call to Source or any I/O: Source's methods take
// the server's own locks.
package monitor
