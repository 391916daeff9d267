// Package jetstream is the persistence half of the server: the JetStream
// API ($JS.API.>), streams that capture subjects into a jetlog.Log, and
// consumers that deliver stored messages at least once. It never imports
// server; streams and consumers hold the Core (through shared) and their
// *jetlog.Log, and nothing holds a pointer back to the Service.
//
// # The Core seam (core.go)
//
// Core is everything JetStream needs of the protocol core, implemented by
// package server (jetstreamCore in server/internal.go):
//
//   - Subscribe(subject, Handler): a server-owned subscription (pulls,
//     acks, flow-control answers, sourcing replies).
//   - SubscribeRequests(subject, RequestHandler): the same, with the
//     publishing client's Rights (API requests, captures).
//   - Unsubscribe(Subscription).
//   - Publish(subject, reply, hdr, data): a message from the server
//     (API responses, advisories, republish, acks).
//   - Deliver(inbox, subject, reply, hdr, data): a stored message to an
//     inbox's subscribers, showing the message's own subject.
//   - HasInterest(subject): whether anything listens (push consumers,
//     no-responders for deliveries).
//   - MayDeliver(inbox, subject), FiltersStored(inbox): whether a push
//     delivery would reach a subscriber under the stored-read rule, asked
//     before it is counted, and whether that can say no at all
//     (machinerefused.go).
//   - WatchInterest(subject, notify): a push consumer's deliver subject
//     gaining or losing listeners, without polling.
//   - UserRights(user): an owner's rights as they are now (owner.go,
//     rightscheck.go).
//
// Rights (User, MayRead, MayPublish) is what a request's sender may do.
// Two optional interfaces ride on them, found by type assertion so that a
// fake Core (fakecore_test.go) needs neither:
//
//   - MsgTrace (msgtrace.go): the Rights of a traced publish
//     (Nats-Trace-Dest): Publisher, TraceOnly and Stream, which adds the
//     stream's trace event and returns what completes it.
//   - CaptureSubscriber (msgtrace.go): a Core whose SubscribeCapture
//     marks a stream's capture subscriptions, the only internal ones a
//     trace-only publish reaches; without it captures use
//     SubscribeRequests.
//
// # Consumers
//
// A consumer's behaviour is machine, a pure state machine in the style of
// etcd-raft's Step/Ready: Pull, Acks, Stored, Interest, FlowControlReply
// and Tick each take the current time and return actions (messages and
// status messages to send, seqs acked for retention, the next deadline).
// Its delivery state (delivered, ack floor, pending with delivery counts
// and deadlines) lives in a ledger: jetlog.Consumer for the consumers of
// file streams, durable or ephemeral, which journals every change, or
// memLedger for memory streams and mem_storage consumers. The machine keeps only the
// flow: where new deliveries start, the waiting pulls, and a heap of
// redelivery deadlines. Transcripts under testdata/ drive it with a fake
// clock and fake stream (machine_test.go). Its stream is a
// consumerSource (consumerlag.go): the stream's reader plus the
// consumer's jetlog.Lag, which answers num_pending for its filters
// without a pass over the stream's subjects.
//
// consumer (consumer.go) is its driver: one goroutine owns the machine,
// feeds it what the consumer's subscriptions capture (pulls, acks,
// flow-control answers) and what the stream and the core signal (new
// messages, interest on the deliver subject), carries out the actions,
// and arms one timer for the earliest deadline. After a step that
// delivered it tells the machine when the deliveries went out
// (Delivered), since a step that read a cold section can outlast the
// inactivity threshold it counts from them. An idle consumer is a
// goroutine asleep in select with no timer: it costs no CPU. It takes
// acks and flow-control answers in both subject forms (ackformat.go);
// ack policy flow_control acks by those answers (ackflowcontrol.go).
//
// # Sourcing
//
// sourcing.go copies an origin of this server into a mirror or source;
// sourceexternal*.go reaches an origin through the API at a prefix, with
// stream identity (sourceidentity.go) and the deliver-prefix check
// (sourceprefix.go); sourcedurable.go follows a durable consumer made on
// the origin beforehand (a config's "consumer"). As an origin, sourcingconsumer.go answers a
// sourcing stream's consumer create (ADR-60).
//
// # Goroutines
//
//   - Service.serve: six, the API's lanes: four serve changes (creates,
//     updates, deletes, purges, consumers), each those of the streams
//     whose names hash to it, one at a time in order of arrival, so a
//     slow change to one stream stalls only the streams of its lane; two
//     serve reads (infos, names, lists, message gets) beside them, so a
//     slow change never stalls a read. What waits is bounded by bytes.
//     Changes that must see each other (subject ownership, storage
//     reservations) meet under Service.mu and Service.limitsMu, and
//     across accounts under Pool.reserving, taken after limitsMu (pool.go).
//   - Service watchers, started by Start and counted in Service.workers:
//     limitWatch (storagelimits.go, with MaxMemory or MaxStorage set, and
//     always for an account's service, whose limits may change: limitsupdate.go),
//     lagWatch (lagalert.go) and fenceWatch (reopen.go: fenced or
//     read-only streams probed until they open again). While Start opens
//     the streams, one more reports a long recovery (loadprogress.go).
//   - consumer.run: one per consumer.
//   - sourcer.run or sourcer.runExternal: one per mirror or source
//     (sourcing.go); an external sourcer publishes its consumer create
//     and delete from a short-lived goroutine, so that a full API lane
//     never blocks it (sourceexternal.go).
//   - a redrive (redrive.go): one goroutine per request, bounded, counted
//     in Service.workers.
//   - a store verify (storeverify.go): one goroutine per request (at most
//     storeVerifyConcurrent, one per stream), counted in Service.workers,
//     and a helper that cancels it when the service stops.
//   - a stream's delete markers for subjects whose messages expired
//     (subject_delete_marker_ttl): one short-lived goroutine per report
//     from the log (stream.go), as the log reports from its own.
//   - a stream's schedules (schedule.go): one time.AfterFunc armed for
//     the earliest due, no goroutine while it waits.
//   - a stream's batch timers: one time.AfterFunc for its open atomic
//     batches (batch.go) and one for its fast batches (batchfastflow.go),
//     each armed for the earliest deadline and stopped when the stream
//     closes.
//   - jetlog's own: one appender per Log.
//   - a snapshot (snapshot.go): one goroutine that reads the stream and
//     sends chunks as the receiver's acks free the window, and one that
//     watches the receiver's interest; both end with the snapshot or at
//     Shutdown.
//   - a restore (restore.go): its chunks are written on the sender's
//     reader goroutine (restore.mu, taken with no other lock); an idle
//     timer abandons it; one goroutine checks and builds it at the end,
//     then takes Service.mu to put the stream in place (a memory stream
//     is filled before it captures anything). The format, for both, is
//     package snapshot's.
//
// Handlers (pulls, acks, API requests) run on client reader goroutines:
// they copy the message and queue it on a channel. A stream's capture
// handler hands a publish straight to its log's appender
// (jetlog.AppendAsync), with the Nats-Expected-* preconditions the
// appender checks where it assigns the seq; the completion, on the
// appender goroutine, acks the publisher, applies interest retention
// and wakes the consumers. A traced publish (Nats-Trace-Dest) brings
// Rights that are a MsgTrace: the capture adds the stream's trace event
// and, for Nats-Trace-Only, stores nothing (msgtrace.go). So a publish
// takes one hop to the disk and one back:
//
//	reader goroutine ──AppendAsync──► appender: write, fdatasync
//	                                     └─ done: pub ack to the reply inbox, wake consumers
//
// # API responses
//
// An API handler (api*.go and the handlers beside their features)
// returns its response or its error and writes nothing: apiReply.send
// (apireply.go) is the one place a JSON API response is marshalled,
// counted, audited and published, and what must follow it (advisories,
// a snapshot's chunks) rides along with the response. lookup and
// lookupConsumer give the not-found errors of every request that names a
// stream or a consumer. Publish acks are written where the publish ends
// (streampublish.go, batchcommit.go, counter.go).
//
// # Locks
//
// Service.mu guards the stream map and the subject owners; stream.mu its
// config, capture subscriptions and consumer map; consumer.mu the counters
// info reads. They nest only as Service.mu → stream.mu (reading a stream's
// config while checking subjects), and consumer.mu is never held while
// taking another. A stream's batches.mu (atomic batches) and fast.mu
// (fast batches, batchfast.go) are taken alone, never across an append,
// and what they decide is published after they are released.
//
// Service.limitsMu (a create's or update's storage reservation and its
// taking effect as one step, storagelimits.go) and Service.ownersMu (one
// re-check of owners' rights at a time, rightscheck.go) come first: the
// locks above are taken inside them, and a stream update, which holds
// limitsMu to its end, re-checks the owners inside it (limitsMu →
// ownersMu). The rest each guard one small thing and are taken briefly:
// scheduler.mu (schedule entries; released before a schedule fires),
// groups.mu (machinegroups.go, read by goroutines other than the
// machine's), memLedger.mu, restore.mu, sourcer.mu (its error), inbox.mu
// (an external sourcer's deliveries, sourceexternalwire.go) and
// loadProgress.mu.
//
// Lock order: Service.limitsMu → Pool.reserving (shared by every
// account's Service, held with limitsMu to the change's end when the
// server-wide limits apply) → Service.ownersMu → Service.mu → stream.mu;
// consumer.mu, batches.mu and fast.mu are taken alone.
//
// No lock is held across disk I/O but one: a stream is opened, a
// consumer's journal created and a stream removed with no lock held; the
// name and subjects of a stream being created are reserved first. The
// exception is stream.counterMu (counter.go), held across an increment's
// append (read the total, store the sum) so that a counter stream's
// increments are serial; it takes no other lock of this package.
package jetstream
