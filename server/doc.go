// Package server is the protocol core: it accepts NATS client
// connections, parses the text protocol, routes messages through the
// wildcard trie to subscribers and queue groups, answers requests nobody
// listens to with the no-responders status, and serves monitoring over
// HTTP. Persistent streams live in server/jetstream; this package starts
// that service and gives it the six calls it needs (jetstream.Core,
// implemented by jetstreamCore in internal.go), and nothing else.
//
// # Goroutines
//
//   - acceptLoop: one, started by Start, accepts connections.
//   - Per connection exactly two: the reader (readLoop) reads into a
//     buffer, feeds the parser and acts on each op; publishing appends to
//     each matching subscriber's outbound queue and, once the read is
//     processed, hands it over. The writer (writeLoop) sleeps until woken,
//     takes everything queued and writes it in one call. A short queue
//     whose writer is idle the reader writes itself, with one
//     non-blocking write on a plain TCP socket, and leaves what the socket
//     does not take to the writer (inline.go): the reader never waits on
//     a socket and never blocks on another client.
//   - The monitoring HTTP server's goroutines, when enabled.
//   - JetStream's own (see server/jetstream): its handlers run on the
//     publishing connection's reader goroutine, copy what they keep and
//     hand it to JetStream's goroutines through channels.
//
// Server.wg counts every goroutine the server started; Shutdown waits for
// all of them.
//
// # Ownership and locks
//
// Server.mu guards the listener, the connection map and the shutdown
// flag. conn.mu guards a connection's subscription map. The trie guards
// itself (subjects.Trie). interestWatchers.mu guards the watched deliver
// subjects; it is taken after conn.mu (a SUB or UNSUB tells the watchers
// while holding its connection's lock) and the notify functions under it
// only signal a channel. No lock is held across network I/O.
//
// Lock order: Server.mu → conn.mu → interestWatchers.mu; outbound queues
// have their own lock, never held while taking another.
package server
