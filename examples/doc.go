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
// runs it against an in-process bus. They need JetStream on (the
// default) and create their own streams (CHECKOUT, CHECKOUT_DLQ, SALE),
// whose subjects overlap none of the README's, so they run on a bus the
// README was followed on. They send no credentials: on a bus secured as
// in the README's "Securing bus", give the user in the URL
// (-url nats://admin:adminpw@127.0.0.1:4222).
package examples
