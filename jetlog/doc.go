// Package jetlog is the storage engine behind persistent streams: an
// append-only, segmented log per stream with limits, dedup and crash
// recovery, plus the durable state of each stream's consumers. It knows
// nothing of sockets, the protocol or configuration files; everything it
// does to disk goes through the FS seam of package vfs. It imports, of
// ours, only subjects (filter matching) and vfs.
//
// # Streams
//
// Open returns a *Log for one stream directory. One appender goroutine per
// Log (started by Open, stopped and waited for by Close) owns the active
// segment. Append, AppendBatch, AppendAtomic, AppendAsync and Delete hand
// requests to it on a bounded queue (Options.AppendQueue; a caller blocks
// while it is full); DeleteAsync parks its request on a list that never
// blocks. The appender takes every request already waiting, checks each
// message (subject, size, preconditions, dedup, discard-new limits) as it
// assigns its seq, encodes them into one buffer, writes it with one call,
// fdatasyncs once (DurabilityAlways), publishes the new messages to the
// in-memory catalog, then replies to every request in order: a blocked
// caller is woken, an asynchronous one's callback runs on the appender.
// Purge, expiry and UpdateConfig run in the same goroutine, one at a
// time. Readers (Get, Next, NextBatch, Messages, LastBySubject) take
// Log.mu for reading only to find a record's location, then ReadAt the
// segment without any lock, verifying the record's checksum.
//
// # Preconditions
//
// An Expect travels with a message (Append, AppendBatch, AppendAsync) and is
// checked by the appender when it assigns the seq, against the stream as
// left by every message before it, those earlier in the same commit
// included, so no other writer can slip in between. The order follows the
// reference server: subject and size, Expect.LastSubjectSeq,
// Expect.LastSeq, the duplicate check (a duplicate is acknowledged as
// such), Expect.LastMsgID, the discard-new limits. A refusal is a
// *WrongLastSeqError or *WrongLastMsgIDError carrying what the stream has.
// A subject-seq check that a delete or a discard-old limit earlier in the
// same commit could change waits for the next commit. The last msg id is
// the Nats-Msg-Id of the newest message stored ("" if it had none); it is
// kept in memory by the appender and, after Open or a purge, read from the
// message at the last seq the first time it is needed.
//
// # Filters
//
// Filters are NATS subjects matched with package subjects ("*" one token,
// a final ">" the rest), plus one rule of jetlog's: an empty filter
// matches everything. An invalid filter matches nothing. Next, NextBatch and
// NumPending take several filters and select what matches any of
// them, counting a message once however many match it; literal filters
// are answered from the per-subject summaries, wildcards by one pass over
// the subjects or, when subjects outnumber the messages left, over the
// slots. Literal filters whose next messages the summaries place (each
// subject's first, when from is at or before it) in an unloaded section
// are read from the segment's index file without loading the section, one
// pass over the index a batch (sparseread.go); a read filtered by literals
// loads only sections that hold one of their subjects, never the one at
// from just because from is there (Log.prefetchFor).
//
// A Lag (TrackLag) is a reader's NumPending kept up to date: the catalog
// adjusts each registered one as it adds and removes messages (Log.mu
// held exclusively), and Lag.At moves its floor under Log.mu held shared
// and the Lag's own mutex, walking the slots between the old floor and
// the new one, or counting afresh when that is cheaper (see Lock order).
//
// # Not found
//
// Whatever is asked for and absent (a seq, a subject with no live
// message, a stream's config, a consumer) is ErrNotFound, wrapped with the
// operation and the input. Methods that answer with a count or a seq
// alone (NumPending, LastSeqBySubject, PrevSeqBySubject) return 0
// instead, which is never a stored seq.
//
// # Directories and durability
//
// The file systems follow strict POSIX (see package vfs): file bytes are
// durable after File.Sync, a new, renamed or removed name after SyncDir
// of its directory, and a directory that is not durable takes its
// contents with it. jetlog makes each entry durable before anything that
// depends on it is acknowledged: Open creates the stream directory with
// vfs.MkdirAllDurable (and syncs its parent when the stream has no
// stream.meta yet, in case a dead process left the directory undurable);
// OpenConsumer does the same for consumers/ and consumers/<name>/; the
// first segment, a rolled segment, a consumer journal and every file
// written by tmp + fsync + rename are followed by a SyncDir of their
// directory before the operation returns.
//
// Lock order: Log.mu, then Lag.mu (Lag.At, which may load sections), then
// a section's loadMu, then catalog.subjMu. A
// section is loaded (its index read) under its loadMu and subjMu (shared).
// Get, Next and Messages load the section they start in before taking
// Log.mu (Log.prefetch), and the appender loads what it expects to remove
// before taking Log.mu exclusively, so index reads rarely happen under
// Log.mu; the exceptions are lookups that wander into further unloaded
// sections (under the shared lock) and removals that reach past what was
// preloaded (under the exclusive one). Otherwise Log.mu is never held
// across disk I/O and never nests with another lock. Consumer.ioMu
// (journal I/O) is taken before Consumer.mu (state), never the other way
// round, and readers of consumer state never wait for ioMu. Log.sendMu is
// held (shared) only while a request enters the queue and (exclusively)
// by Close to stop new ones; Log.deferMu only around the DeleteAsync
// list. Neither nests with another lock. Log.Verify takes Log.mu
// (shared) only between its reads, and a consumer's ioMu only to learn
// its journal's name and length. FileCache.mu is a leaf: it is
// taken (briefly, never across I/O) under any of the above, and nothing
// is taken under it. So is IndexCache.mu. The index cache's hand-back of
// freed memory (debug.FreeOSMemory) and the file cache's close of idle
// files run on timers' goroutines, which Close of each cache waits for.
//
// # Files
//
// log.go (the Log, its results), open.go (Open and recovery), replay.go
// (the segment-by-segment replay recovery runs, gaps and torn tails), append.go
// (the append and delete API), queue.go (requests to the appender and
// its replies), appender.go (the goroutine, group commit), appendwrite.go
// (a commit's write and sync, the sticky error),
// expect.go (preconditions), atomicbatch.go (AppendAtomic), rollup.go
// (Expect.Rollup, done in the commit), control.go (roll, tombstones, Close),
// limits.go, purge.go, read.go, lag.go (counts kept for readers),
// sparseread.go (rare subjects' messages
// without their section), filter.go, catalog.go, section.go,
// catalogsnap.go, segment.go, segindex.go, seqmark.go (seq.mark),
// segblocks.go (the block directory beside an index),
// filecache.go (segment files opened on demand), indexcache.go (the bound
// on sections in memory), record.go, scan.go, dedup.go,
// header.go, meta.go (stream.meta and atomic file writes), config.go
// (StreamConfig, Options, UpdateConfig), verify.go (Log.Verify, the check
// of an open log), verifyread.go (its block reads and resynchronisation),
// verifyconsumer.go (its check of a consumer's files), verifyreport.go
// (VerifyReport, shared with the offline check); consumers: consumer.go (the
// Consumer), consumerstate.go (the ConsumerState value), consumerjournal.go
// (its snapshot and journal files), consumerrecord.go (run records);
// encryption: seal.go (Keyring, the sealer of records and files),
// sealxchacha.go (XChaCha20-Poly1305 with its subkey kept), streamkey.go
// (stream.key, the key checks at Open).
//
// # Directory layout
//
//	<dir>/stream.key                 crc32c + msgpack{v, cipher, wrapped}: an encrypted
//	                                 stream's data key (see Encryption); never sealed
//	<dir>/stream.meta                crc32c u32 LE + msgpack{v, config, created}
//	<dir>/clean                      exists only after a clean Close
//	<dir>/dedup.snap                 crc32c + msgpack{ids, seqs, ts}: the dedup window at a clean Close
//	<dir>/catalog.snap               crc32c + msgpack{v, last, last_ts, msgs, bytes, segments, subjects}:
//	                                 the catalog summary at a clean Close (see below)
//	<dir>/seq.mark                   crc32c + msgpack{v, seg, first_seg, durable, reserved}:
//	                                 the sequence mark (see below)
//	<dir>/LOCK                       flocked while a Log has the stream open
//	<dir>/0000000000000001.seg       segment files, 16-digit decimal id
//	<dir>/0000000000000001.idx       index of the segment (see below)
//	<dir>/0000000000000001.blk       block directory of the index (segblocks.go): a cache,
//	                                 plaintext stores only, used only if it matches the index
//	<dir>/consumers/<name>/consumer.meta   crc32c + msgpack(ConsumerConfig)
//	<dir>/consumers/<name>/state.snap      crc32c + msgpack{gen, delivered, ack floor, pending}
//	<dir>/consumers/<name>/journal.<gen>   consumer journal records
//
// Segment ids grow by one; the active segment is the highest. A segment
// rolls when it reaches Options.SegmentSize. A segment is removed once it
// and every segment before it hold no live message (never the active one).
//
// # Record format
//
// Segments and consumer journals are sequences of records. All integers
// are little-endian. The CRC-32C (Castagnoli) covers the length field and
// the body, so a torn or flipped record is always detected.
//
//	 0       4       8    9            17           25      27        31
//	+-------+-------+----+------------+------------+-------+---------+---------+--------+---------+
//	| len   | crc   |kind| seq        | ts (ns)    | subj  | hdr len | subject | header | payload |
//	| u32   | u32   | u8 | u64        | i64        | len   | u32     |         |        |         |
//	|       |       |    |            |            | u16   |         |         |        |         |
//	+-------+-------+----+------------+------------+-------+---------+---------+--------+---------+
//	        len = bytes after the crc field (23 + subject + header + payload), at most 64 MiB
//
// The two top bits of a message record's hdr len are flags: bit 31, the
// payload is s2-compressed; bit 30, the record belongs to an atomic batch
// (AppendAtomic) and more of it follows in the same write. Every record
// of a batch but its last has bit 30, so a segment that ends with bit-30
// records was cut inside a batch, and recovery drops them with the torn
// tail: a batch is recovered whole or not at all. A message stored with
// a rollup (Expect.Rollup) has bit 30 too, and the commit's tombstone
// that holds its removals follows it in the same write and ends the run,
// so a rollup is recovered with its message or not at all.
//
// Record kinds (never renumbered):
//
//	1  message    seq = stream seq, ts = store time, header = NATS header block
//	2  tombstone  seq = highest seq assigned when written; payload =
//	              floor u64 (every seq below it is removed; 0 = none)
//	              followed by uvarint deltas of removed seqs, ascending
//	16 delivered  (consumer journal) seq = stream seq, ts = redelivery
//	              deadline, payload = uvarint consumer seq, uvarint deliveries
//	17 acked      seq = stream seq
//	18 acked all  seq = every pending seq up to it is acked
//	19 deadline   seq = stream seq, ts = new redelivery deadline
//	20 delivered run  (consumer journal) deliveries with consecutive
//	              consumer seqs, ascending stream seqs, one delivery
//	              count: seq, ts = the first's stream seq and deadline,
//	              payload = uvarint consumer seq, uvarint deliveries,
//	              then per further one uvarint stream seq delta (>= 1),
//	              varint deadline delta
//	21 acked run  (consumer journal) acks of ascending stream seqs as
//	              ranges: seq = first range's start, payload = uvarint
//	              its length, then per further range uvarint gap from
//	              the previous one's end (>= 1), uvarint length
//	22 reset      (consumer journal) the consumer starts over: seq = the
//	              stream seq before the next to deliver; nothing pending,
//	              delivered and ack floor {0, seq}
//	23 given up   (consumer journal) seq = a pending stream seq whose
//	              deliveries ran out: it leaves the pending set for the
//	              given-up set (kept until acked), the floors unmoved
//
// A step's changes (a pull's deliveries, a batch of acks) are written as
// run records where they form runs (consumerrecord.go); a run replays as
// the single changes it stands for, so a journal of single records (as
// written before runs) opens to the same state.
//
// A tombstone with floor 1 and no removed seqs is a skip (SkipTo): its
// seq becomes the last assigned, and the seqs between were never used
// (a mirror keeps its origin's seqs this way).
//
// Message seqs are contiguous in log order, but for skips; a tombstone
// only names seqs written before it. Removals by limits (discard old, max age) are written
// lazily with the next commit, because recovery applies the limits again;
// Delete and Purge are journaled (and in DurabilityAlways synced) before
// they return.
//
// # Index files
//
//	"JLIX" | version u8 | entries... | segment size u64 | count u32 | crc32c u32
//	version 1 entry: kind u8 | seq u64 | ts i64 | offset u64 | size u32 | subject len u16 | subject
//	                 [tombstone only: payload len u32 | payload]
//	version 2 entry: kind u8 | seq Δ varint | ts Δ varint | offset Δ varint | size uvarint |
//	                 subject ref uvarint [0 or 1: subject len uvarint | subject]
//	                 [tombstone only: payload len uvarint | payload]
//
// Version 2 (written since issue #30; version 1 is still read, and an
// active segment's version 1 index is rewritten as version 2 when it is
// resumed) stores each entry as deltas from the entry before (zero for
// the first): seq and ts from its seq and ts, offset from its offset plus
// size (0 for records laid end to end). Varints are Go's encoding/binary
// ones (signed: zig-zag). A subject ref of 0 is a literal subject, 1 a
// subject that is also appended to the index's subject table, n >= 2 the
// table's entry n-2; the writer adds at most 1,024 subjects to the table.
// A message of 64 bytes on a repeated subject costs 7 to 10 index bytes
// instead of 31 plus its subject.
//
// An index is written when its segment is sealed (roll) and for the active
// segment at Close, each time followed by its block directory (<id>.blk,
// segblocks.go): where every 1,024th entry starts and the deltas' base
// and subject table there, so one entry is found by decoding one block.
// The directory names the index's checksum and is ignored unless the
// index's trailer carries it; a missing or damaged one costs a read of
// the whole index, nothing else. It is trusted only if its checksum holds and its
// recorded segment size equals the file's; otherwise the segment is
// scanned and the index rewritten.
//
// # Catalog snapshot
//
// catalog.snap summarises the in-memory catalog at a clean Close: per
// segment its id, file size, first slot seq, slot count, live count,
// newest message time, the deleted slots as seq ranges and its live
// messages per subject id; per subject its id, live count and first and
// last live seq (as parallel columns). Subject ids are never reused. Open
// uses it only with the clean marker, and only if it lists exactly the
// segment files found, each of the recorded size with its index present,
// and adds up; it is removed at Open either way. Sealed segments then
// stay unloaded until first used, when their index (or, if that is
// damaged, the segment itself) is read. A clean restart therefore costs
// one summary per segment and per subject plus the active segment's
// index, not one entry per message.
//
// # Sequence mark
//
// seq.mark keeps, outside the segments, what a missing segment file would
// otherwise take with it: seg, the active segment's id; first_seg, the
// oldest segment still needed (older ones were removed on purpose);
// durable, a seq up to which everything was synced; reserved, a bound on
// every seq ever assigned. It is replaced atomically at each roll (after
// the new segment's name is durable), before segments are removed, at
// Open, at a clean Close (durable = reserved = the last seq, exact) and
// whenever a commit would write a seq above reserved (a new reservation
// of at least 4096 seqs ahead, doubling while reservations come within a
// second of each other). It is never written per commit.
//
// Open compares it with what it found: segment ids after the last one
// found up to seg, or from first_seg to the first one found, or a gap in
// the ids, are missing segments; a last seq found below durable means
// records missing from the end. Each is a Loss in the RecoveryReport,
// split at durable into acknowledged and maybe-acknowledged parts; the
// stream's last seq is raised to reserved (or durable), and a new
// segment, or a tombstone, records it, so sequences never go back. A
// store without seq.mark (written before it existed) opens as before and
// gets one.
//
// # Encryption
//
// With Options.Keys a new file stream is encrypted: Open draws a random
// 256-bit data key, wraps it (AEAD, random nonce, the cipher's name as
// associated data) under the key-encryption key the Keyring derived from
// the configured secret (argon2id), and writes stream.key, durably,
// before any file it seals. Every later file of the stream is sealed
// under the data key with the stream's cipher, XChaCha20-Poly1305 or
// AES-256-GCM, chosen at creation and kept:
//
//   - a record (segments, consumer journals) is
//     len u32 | crc u32 | nonce (24 or 12) | AEAD(body, ad = len) | tag 16,
//     body being a plain record's; the crc covers all after it, as in a
//     plain record, so torn tails and resynchronisation work without
//     opening anything, and the AEAD then vouches for the contents: a
//     record that fails it is a *CorruptError "authentication failed",
//     never data. A reader opens it in place, once. Sealing adds 40
//     bytes (XChaCha) or 28 (AES) per record, counted in DiskBytes, not
//     in State.Bytes (accounting.go);
//   - every other file (stream.meta, seq.mark, the indexes, catalog.snap,
//     dedup.snap, consumer.meta, state.snap) is "JLSE" | nonce |
//     AEAD(its plain contents, ad = its path in the stream directory);
//     clean and LOCK are empty and stay so.
//
// Nonces are a base drawn at each Open plus a counter (seal.go says why
// they never repeat). A keyring with a previous key opens a stream.key
// it wrapped and rewraps it to the current key (atomically): rotation
// rewrites one small file per stream and no data. Open refuses, before
// writing anything, an encrypted stream without keys (ErrNoKey), with
// keys that do not open its stream.key (ErrWrongKey), and a plaintext
// stream with keys (ErrNotEncrypted). What stays visible: file names
// (the stream's and consumers' names are directory names), sizes, and
// each record's length.
//
// # Recovery
//
// See README.md for the rules. In short: a bad record with nothing valid
// after it is a torn tail and is truncated; a bad record followed by a
// valid one is corruption, reported as a *CorruptError in the
// RecoveryReport, and the scan resynchronises on the next valid record;
// gaps in message seqs are reported as lost ranges. Zeros after the last
// whole record are space the active segment reserved ahead of its writes
// (prealloc.go), not damage; sealed and cleanly closed segments are
// trimmed to their records.
package jetlog
