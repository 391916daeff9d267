package jetstream

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/snapshot"
	"github.com/bus-dev/bus/subjects"
)

// createConsumer adds a consumer, or returns the existing one when the
// config matches or the action allows an update. Opening a durable
// consumer's state is disk I/O; no lock is held across it.
func (st *stream) createConsumer(cfg consumerConfig, action string) (*consumer, *apiError) {
	return st.startNewConsumer(cfg, action, nil, nil)
}

// createConsumerAnswered is createConsumer for an API request: a
// consumer it starts delivers nothing, and takes no step, until answered
// is closed, which the caller does once the create's reply is sent. So
// a push consumer's first messages never overtake that reply (nats.go's
// js.Subscribe waits for it, and its callback may end the wait's
// context), as with the reference.
func (st *stream) createConsumerAnswered(cfg consumerConfig, action string, answered <-chan struct{}) (*consumer, *apiError) {
	return st.startNewConsumer(cfg, action, nil, answered)
}

// createConsumerAt is createConsumer starting an in-memory consumer from
// the state in at (a memory stream's restore).
func (st *stream) createConsumerAt(cfg consumerConfig, action string, at *snapshot.Consumer) (*consumer, *apiError) {
	return st.startNewConsumer(cfg, action, at, nil)
}

// startNewConsumer is the three above: at, when not nil, is the state to
// start from; answered, when not nil, holds the consumer back until it
// is closed.
func (st *stream) startNewConsumer(cfg consumerConfig, action string, at *snapshot.Consumer, answered <-chan struct{}) (*consumer, *apiError) {
	st.mu.Lock()
	existing := st.consumers[cfg.Name]
	count := len(st.consumers)
	st.mu.Unlock()
	if existing != nil {
		stored, asked := existing.config(), cfg
		asked.Metadata = levelOf(cfg.Metadata, stored.Metadata) // one stored before levels were is the same
		if sameJSON(stored, asked) {
			return existing, nil
		}
		if action == "create" {
			return nil, errConsumerExists()
		}
		if e := checkConsumerUpdate(existing.config(), cfg); e != nil {
			return nil, e
		}
		// A push consumer someone listens to keeps its deliver subject:
		// the losers of a race to create one queue group's consumer
		// (nats.go's QueueSubscribe) learn they must join the winner's.
		if old := existing.config().DeliverSubject; old != cfg.DeliverSubject && existing.src.HasInterest(old) {
			return nil, newAPIError(400, 10013, "consumer name already in use")
		}
		// An update: restart the consumer with the new config, keeping
		// its delivery state.
		st.dropConsumer(existing, "409 Consumer Deleted")
	} else if action == "update" {
		return nil, errConsumerDoesNotExist()
	}
	scfg := st.config()
	if n := st.sh.bound().limits.maxConsumers(scfg); n > 0 && int64(count) >= n && existing == nil && !cfg.sourcing() {
		return nil, errMaxConsumers()
	}
	if scfg.Retention == jetlog.RetentionWorkQueue && existing == nil && !cfg.sourcing() {
		if e := st.checkWorkQueueFilters(cfg); e != nil {
			return nil, e
		}
	}
	led, err := st.openLedger(cfg, scfg, at)
	if err != nil {
		st.sh.log.Error("open consumer state", "stream", st.name, "consumer", cfg.Name, "err", err)
		if isNoSpace(err) {
			return nil, errInsufficientStorage()
		}
		return nil, errConsumerCreate("%s", publicError(err))
	}
	created := st.sh.now().UTC()
	if existing != nil {
		created = existing.created
	}
	c, err := startConsumer(st.sh, st.name, consumerStart{
		cfg:       cfg,
		created:   created,
		src:       st.src,
		ledger:    led,
		durable:   cfg.storedDurably(scfg),
		onAcked:   st.acked,
		onExpired: st.expired,
		answered:  answered,
	})
	if err != nil {
		_ = led.Close()
		return nil, errConsumerCreate("%s", publicError(err))
	}
	st.mu.Lock()
	st.consumers[cfg.Name] = c
	st.publishConsumersLocked()
	st.mu.Unlock()
	return c, nil
}

// checkWorkQueueFilters enforces that a work queue's consumers never
// share a message: one unfiltered consumer, or non-overlapping filters.
func (st *stream) checkWorkQueueFilters(cfg consumerConfig) *apiError {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, other := range st.consumers {
		if other.cfg.sourcing() { // a sourcing stream's: outside the rule, as in the reference
			continue
		}
		of, nf := other.cfg.filters(), cfg.filters()
		if len(of) == 0 || len(nf) == 0 {
			if len(of) == 0 && len(nf) == 0 {
				return errWorkQueueUnfiltered()
			}
			return errWorkQueueNotUnique()
		}
		for _, a := range of {
			for _, b := range nf {
				if subjects.Overlap(a, b) {
					return errWorkQueueNotUnique()
				}
			}
		}
	}
	return nil
}

// sameJSON compares two configs as clients see them.
func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// openLedger opens a durable consumer's journaled state, or makes an
// in-memory one.
func (st *stream) openLedger(cfg consumerConfig, scfg streamConfig, at *snapshot.Consumer) (ledger, error) {
	backoff := make([]time.Duration, len(cfg.BackOff))
	for i, b := range cfg.BackOff {
		backoff[i] = time.Duration(b)
	}
	if !cfg.storedDurably(scfg) {
		s := jetlog.NewConsumerState(ledgerAckWait(cfg), backoff, st.sh.now)
		if at != nil {
			restoreState(&s, *at)
		}
		return newMemLedger(s), nil
	}
	raw, err := storedWithOwner(cfg, cfg.owner)
	if err != nil {
		return nil, err
	}
	c, err := st.log.OpenConsumer(cfg.Name, jetlog.ConsumerConfig{
		AckWait:       ledgerAckWait(cfg),
		Backoff:       backoff,
		MaxAckPending: cfg.MaxAckPending,
		Raw:           raw,
	})
	if err != nil {
		return nil, err
	}
	// The consumer was rebuilt from what is intact: say so, since it may
	// deliver acked messages again (never skip one).
	for _, ce := range c.Corrupt() {
		st.sh.log.Error("consumer state damaged; rebuilt from what is intact, acked messages may be delivered again",
			"stream", st.name, "consumer", cfg.Name, "file", ce.Segment, "offset", ce.Offset, "reason", ce.Reason)
	}
	return journaled{Consumer: c, log: st.sh.log.With("stream", st.name, "consumer", cfg.Name)}, nil
}

// loadConsumers restarts the durable consumers stored with the stream.
// One that cannot be restarted is logged and left on disk; the others and
// the stream are served.
func (st *stream) loadConsumers() {
	names, err := st.log.ConsumerNames()
	if err != nil {
		st.sh.log.Error("consumers unreadable; none loaded", "stream", st.name, "err", err)
		return
	}
	for _, name := range names {
		lcfg, err := st.log.LoadConsumerConfig(name)
		if err != nil {
			st.sh.log.Error("consumer config unreadable; skipped", "stream", st.name, "consumer", name, "err", err)
			continue
		}
		var cfg consumerConfig
		if err := json.Unmarshal(lcfg.Raw, &cfg); err != nil {
			st.sh.log.Error("consumer config undecodable; skipped", "stream", st.name, "consumer", name, "err", err)
			continue
		}
		cfg.owner = takeOwner(cfg.extra)
		if _, e := st.createConsumer(cfg, ""); e != nil {
			st.sh.log.Error("consumer not restarted; skipped", "stream", st.name, "consumer", name, "err", e)
		}
	}
	st.sweepRetained()
}

// sweepRetained applies work-queue and interest retention, after a
// restart, to what the consumers had acked: the deletes acks cause are
// not waited for (stream.acked), so a crash can leave a message stored
// that its consumer acked, and nothing would ack it again. Each
// consumer's messages at or below its ack floor go through acked as if
// just acked. Normally there are none: one read per consumer.
func (st *stream) sweepRetained() {
	if st.config().Retention == jetlog.RetentionLimits {
		return
	}
	st.mu.Lock()
	consumers := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		consumers = append(consumers, c)
	}
	st.mu.Unlock()
	for _, c := range consumers {
		floor := c.ledger.Info().AckFloor.Stream
		// A message given up on (max_deliver) may lie below the floor
		// unacked: it stays, as the reference keeps it, until acked.
		var givenUp map[uint64]uint64
		_ = c.ledger.Update(func(s *jetlog.ConsumerState) { givenUp = maps.Clone(s.GivenUp) }, false)
		for seq := uint64(1); seq <= floor; {
			msgs, err := st.log.NextBatch(seq, c.cfg.filters(), 1024)
			if err != nil || len(msgs) == 0 {
				break
			}
			var done []uint64
			for _, m := range msgs {
				if _, kept := givenUp[m.Seq]; m.Seq <= floor && !kept {
					done = append(done, m.Seq)
				}
			}
			if len(done) > 0 {
				st.acked(done)
			}
			seq = msgs[len(msgs)-1].Seq + 1
		}
	}
}

// removeConsumer deletes a consumer and its stored state; false if there
// is no such consumer.
func (st *stream) removeConsumer(name string) bool {
	st.mu.Lock()
	c := st.consumers[name]
	delete(st.consumers, name)
	st.publishConsumersLocked()
	st.mu.Unlock()
	if c == nil {
		return false
	}
	if c.close("409 Consumer Deleted") {
		st.deleteState(c)
	}
	return true
}

// dropConsumer stops a consumer so that it can restart with a new config
// on the same stored state.
func (st *stream) dropConsumer(c *consumer, status string) {
	st.forget(c)
	c.close(status)
}

// expired forgets a consumer that removed itself after its inactivity
// threshold (called on its goroutine).
func (st *stream) expired(c *consumer) {
	st.forget(c)
	st.deleteState(c)
	st.sh.adviseConsumer(st.name, c.name, actionDelete)
}

// forget takes c out of the consumer map, if it is still the one there.
func (st *stream) forget(c *consumer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.consumers[c.name] == c {
		delete(st.consumers, c.name)
		st.publishConsumersLocked()
	}
}

// deleteState removes a closed durable consumer's files.
func (st *stream) deleteState(c *consumer) {
	if !c.durable {
		return
	}
	if err := st.log.DeleteConsumer(c.name); err != nil {
		st.sh.log.Error("delete consumer state", "stream", st.name, "consumer", c.name, "err", err)
	}
}

func (st *stream) consumer(name string) *consumer {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.consumers[name]
}

// publicConsumers is sortedConsumers without the direct ones (see
// numConsumers): what LIST and NAMES show.
func (st *stream) publicConsumers() []*consumer {
	return slices.DeleteFunc(st.sortedConsumers(), func(c *consumer) bool { return c.cfg.Direct })
}

func (st *stream) sortedConsumers() []*consumer {
	st.mu.Lock()
	out := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		out = append(out, c)
	}
	st.mu.Unlock()
	slices.SortFunc(out, func(a, b *consumer) int { return strings.Compare(a.name, b.name) })
	return out
}

// publishConsumersLocked refreshes what the append path reads without
// the lock: the consumers, and whether an interest stream has none.
// st.mu is held.
func (st *stream) publishConsumersLocked() {
	list := make([]*consumer, 0, len(st.consumers))
	for _, c := range st.consumers {
		list = append(list, c)
	}
	st.live.Store(&list)
	st.dropUnheard.Store(st.cfg.Retention == jetlog.RetentionInterest && len(list) == 0)
}

// notifyConsumers wakes every consumer after a message was stored. It
// takes no lock: it runs on the appender goroutine for every message.
func (st *stream) notifyConsumers() {
	for _, c := range *st.live.Load() {
		c.signal()
	}
	if w := st.watchers.Load(); w != nil {
		for _, s := range *w {
			s.signal()
		}
	}
}

// info snapshots the consumer for API responses.
func (c *consumer) info(typ string) consumerInfo {
	s := c.ledger.Info()
	c.mu.Lock()
	waiting, next, dead, initial := c.waiting, c.next, c.dead, c.initial
	pinID, pinnedAt := c.pinID, c.pinnedAt
	c.mu.Unlock()
	floor := s.AckFloor
	if s.NumAckPending == 0 && s.NumGivenUp == 0 {
		floor = s.Delivered
	}
	now := c.sh.now()
	paused, remaining := c.pauseInfo(now)
	var prio []priorityGroupState
	if g := c.cfg.PriorityGroups; len(g) > 0 {
		prio = []priorityGroupState{{Group: g[0], PinnedID: pinID, PinnedTS: pinnedAt.UTC()}}
	}
	cfg := c.config()
	if typ != "" { // an answer about this consumer, not a list's
		cfg.Metadata = c.sh.withServerLevel(cfg.Metadata)
	}
	return consumerInfo{
		Type:           typ,
		Stream:         c.stream,
		Name:           c.name,
		Created:        c.created,
		Config:         cfg,
		Delivered:      sequencePair{Consumer: s.Delivered.Consumer, Stream: s.Delivered.Stream},
		AckFloor:       sequencePair{Consumer: floor.Consumer, Stream: floor.Stream},
		NumAckPending:  s.NumAckPending,
		NumRedelivered: s.NumRedelivered,
		NumWaiting:     waiting,
		// Lag: the last_per_subject start messages still to deliver, and
		// everything stored from next on.
		NumPending:   uint64(initial) + c.src.NumPending(next, c.cfg.filters()),
		PushBound:    c.cfg.DeliverSubject != "" && c.src.HasInterest(c.cfg.DeliverSubject),
		Cluster:      &clusterInfo{Leader: c.sh.server},
		TS:           now.UTC(),
		Suspended:    c.suspended.Load(),
		DeadLettered: dead,

		DeadLettersLost: c.lostDead.Load(),
		LagAlerting:     c.lagging.Load(),
		Paused:          paused,
		PauseRemaining:  remaining,
		PriorityGroups:  prio,
	}
}
