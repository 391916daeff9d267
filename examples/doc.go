// Package examples holds runnable programs that show package client
// against a running bus (go run ./cmd/bus serve):
//
//   - checkout: an order fans out to four consumers (charge, inventory,
//     e-mail, analytics); one is flaky and retries with back-off, one
//     meets a poisoned order that lands in the dead-letter queue.
//   - flashsale: 10,000 orders arrive in a burst; a worker pool drains
//     them at a fixed rate while the queue depth is printed.
//   - rpc: typed request-reply with a handler error.
//
// Each takes -url (default nats://127.0.0.1:4222) and has a test that
// runs it against an in-process bus.
package examples
