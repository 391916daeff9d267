// Package client makes at-least-once delivery safe to use from Go: typed
// events, a producer that stores each event once, workers with retries
// and dead letters, and idempotent handlers. It is built on nats.go and
// its jetstream package only, so it works against bus and, wherever it
// needs no bus extension, against nats-server.
//
// # Typed events
//
// Publish and Subscribe send and receive an Event[T] over core NATS;
// Request and Handle do request-reply with typed request and response.
// Payloads are msgpack by default (package MsgPack, which honours json
// struct tags) or JSON, chosen per Conn (Options.Codec) or per call
// (WithCodec). The envelope travels in headers that other languages can
// read:
//
//	Content-Type     application/msgpack | application/json
//	ce-specversion   1.0
//	ce-id            event id (random, or WithID)   also sent as Nats-Msg-Id
//	ce-type          event type (T's Go type, or WithType)
//	ce-source        Options.Source
//	ce-time          RFC 3339, nanoseconds, UTC
//	traceparent      W3C trace context, continuing the one in ctx
//
// The ce-* names are those of the CloudEvents binary content mode. A
// failed Handle reply carries Nats-Service-Error and
// Nats-Service-Error-Code, as NATS services (micro) do.
//
// # Reliable producer
//
// Produce publishes to a stream and waits for the stored ack, retrying
// timeouts with back-off and jitter under the same Nats-Msg-Id, so an
// attempt that was stored but whose ack was lost makes the retry a
// reported duplicate (PubAck.Duplicate) rather than a second copy. That
// is effectively-once publishing within the stream's duplicate window.
//
// # Workers
//
// A Worker runs a Handler on a durable pull consumer with bounded
// concurrency. A nil error acks; an error NAKs with a delay from the
// RetryPolicy (exponential, with jitter); a Permanent error terminates
// the message at once; the last allowed attempt failing ends it too.
// Long handlers send +WPI heartbeats. Shutdown stops fetching and waits
// for running handlers, or hands their messages back when its context
// ends. One WorkerConfig declares stream, consumer, concurrency, retry
// and dead-letter queue; EnsureStream and EnsureConsumer create or update
// them.
//
// # Per server
//
//	feature                              bus        nats-server
//	typed events, RPC, producer          yes        yes
//	worker, retries, heartbeats          yes        yes
//	dead letters                         server     worker, from advisories
//	StreamStore / MemoryStore            yes        yes
//	KVStore                              yes        yes
//
// Conn.Server tells them apart: bus answers a request on $BUS.INFO with
// {"server":"bus","version":…,"jetstream":true,"extensions":[…]}, where
// extensions are "dead_letter_subject", "backoff_jitter" and
// "nak_backoff"; nats-server has no responder there. On bus,
// EnsureConsumer sets x_bus_dead_letter_subject and x_bus_backoff_jitter
// (docs/api.md), so the server copies given-up messages to the
// dead-letter subject with Bus-Dlq-* headers. Elsewhere the worker
// subscribes (as a queue group, so one copy per consumer) to
// $JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer> and
// ...MSG_TERMINATED..., reads the message back by sequence and publishes
// the same copy itself. That fallback loses a dead letter whose advisory
// fires while no worker is connected, and needs limits retention (a work
// queue drops a terminated message before it can be read back), which is
// what EnsureStream creates.
//
// # Idempotent handlers
//
// Idempotent wraps a Handler so an event id already recorded in a Store
// is acked without running the handler. See Idempotent for the exact
// guarantee and the crash window that remains.
//
// # Concurrency
//
// Conn, Producer, Worker and the stores are safe for concurrent use.
// Subscribe and Handle callbacks run one at a time per subscription, on
// nats.go's goroutine.
package client
