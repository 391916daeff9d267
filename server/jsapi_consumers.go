package server

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// handleConsumer dispatches $JS.API.CONSUMER.* requests; t is the subject
// after "CONSUMER".
func (js *jetStream) handleConsumer(r apiRequest, t []string) {
	switch {
	case len(t) >= 3 && t[0] == "CREATE":
		js.consumerCreate(r, t[1], t[2], strings.Join(t[3:], "."))
	case len(t) == 4 && t[0] == "DURABLE" && t[1] == "CREATE":
		js.consumerCreate(r, t[2], t[3], "")
	case len(t) == 3 && t[0] == "INFO":
		js.consumerInfo(r, t[1], t[2])
	case len(t) == 3 && t[0] == "DELETE":
		js.consumerDelete(r, t[1], t[2])
	case len(t) == 2 && t[0] == "LIST":
		js.consumerList(r, t[1])
	case len(t) == 2 && t[0] == "NAMES":
		js.consumerNames(r, t[1])
	}
}

func (js *jetStream) consumerCreate(r apiRequest, streamName, name, filter string) {
	var req struct {
		Stream string         `json:"stream_name"`
		Config consumerConfig `json:"config"`
		Action string         `json:"action"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	st := js.stream(streamName)
	if st == nil {
		js.respondErr(r.reply, typeConsumerCreate, errStreamNotFound())
		return
	}
	if req.Stream != "" && req.Stream != streamName {
		js.respondErr(r.reply, typeConsumerCreate, errStreamNameMismatch())
		return
	}
	cfg := req.Config
	if filter != "" && filter != cfg.FilterSubject {
		js.respondErr(r.reply, typeConsumerCreate, errFilterMismatch())
		return
	}
	if cfg.Durable != "" && cfg.Durable != name || cfg.Name != "" && cfg.Name != name {
		js.respondErr(r.reply, typeConsumerCreate, errDurableMismatch())
		return
	}
	if cfg.Name == "" && cfg.Durable == "" {
		cfg.Name = name
	}
	if e := cfg.normalize(st); e != nil {
		js.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	c, e := st.createConsumer(cfg, req.Action)
	if e != nil {
		js.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	js.respond(r.reply, c.info(typeConsumerCreate))
}

// createConsumer adds a consumer, or returns the existing one when the
// config matches or the action allows an update.
func (st *stream) createConsumer(cfg consumerConfig, action string) (*consumer, *apiError) {
	st.mu.Lock()
	existing := st.consumers[cfg.Name]
	count := len(st.consumers)
	st.mu.Unlock()
	if existing != nil {
		if sameConsumerConfig(existing.cfg, cfg) {
			return existing, nil
		}
		if action == "create" {
			return nil, errConsumerExists()
		}
		// An update: restart the consumer with the new config, keeping
		// its delivery state.
		st.removeConsumerKeepState(existing)
	} else if action == "update" {
		return nil, errConsumerDoesNotExist()
	}
	scfg := st.config()
	if scfg.MaxConsumers > 0 && int64(count) >= scfg.MaxConsumers && existing == nil {
		return nil, errMaxConsumers()
	}
	if scfg.Retention == "workqueue" && existing == nil {
		if e := st.checkWorkQueueFilters(cfg); e != nil {
			return nil, e
		}
	}
	state, err := st.openState(cfg)
	if err != nil {
		return nil, errConsumerCreate("%v", err)
	}
	created := time.Now().UTC()
	if existing != nil {
		created = existing.created
	}
	c, err := st.startConsumer(cfg, state, created)
	if err != nil {
		_ = state.Close()
		return nil, errConsumerCreate("%v", err)
	}
	st.mu.Lock()
	st.consumers[cfg.Name] = c
	st.mu.Unlock()
	return c, nil
}

// checkWorkQueueFilters enforces that a work queue's consumers never
// share a message: one unfiltered consumer, or non-overlapping filters.
func (st *stream) checkWorkQueueFilters(cfg consumerConfig) *apiError {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, other := range st.consumers {
		of, nf := other.cfg.filters(), cfg.filters()
		if len(of) == 0 || len(nf) == 0 {
			if len(of) == 0 && len(nf) == 0 {
				return errWorkQueueUnfiltered()
			}
			return errWorkQueueNotUnique()
		}
		for _, a := range of {
			for _, b := range nf {
				if overlaps(a, b) {
					return errWorkQueueNotUnique()
				}
			}
		}
	}
	return nil
}

func sameConsumerConfig(a, b consumerConfig) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// openState opens a durable consumer's journaled state, or makes an
// in-memory one for an ephemeral consumer.
func (st *stream) openState(cfg consumerConfig) (deliveryState, error) {
	backoff := make([]time.Duration, len(cfg.BackOff))
	for i, b := range cfg.BackOff {
		backoff[i] = time.Duration(b)
	}
	if !cfg.isDurable() || cfg.MemoryStorage || st.config().Storage == "memory" {
		return newMemState(time.Duration(cfg.AckWait), backoff, cfg.MaxAckPending), nil
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return st.log.OpenConsumer(cfg.Name, jetlog.ConsumerConfig{
		AckWait:       time.Duration(cfg.AckWait),
		Backoff:       backoff,
		MaxAckPending: cfg.MaxAckPending,
		Raw:           raw,
	})
}

// loadConsumers restarts the durable consumers stored with the stream.
func (st *stream) loadConsumers() error {
	names, err := st.log.ConsumerNames()
	if err != nil {
		return err
	}
	for _, name := range names {
		lcfg, err := st.log.LoadConsumerConfig(name)
		if err != nil {
			st.js.log.Error("consumer config unreadable; skipped", "stream", st.name, "consumer", name, "err", err)
			continue
		}
		var cfg consumerConfig
		if err := json.Unmarshal(lcfg.Raw, &cfg); err != nil {
			st.js.log.Error("consumer config undecodable; skipped", "stream", st.name, "consumer", name, "err", err)
			continue
		}
		if _, e := st.createConsumer(cfg, ""); e != nil {
			return e
		}
	}
	return nil
}

// removeConsumer deletes a consumer and its stored state.
func (st *stream) removeConsumer(name string) bool {
	st.mu.Lock()
	c := st.consumers[name]
	delete(st.consumers, name)
	st.mu.Unlock()
	if c == nil {
		return false
	}
	c.close()
	if c.cfg.isDurable() && !c.cfg.MemoryStorage && st.config().Storage != "memory" {
		if err := st.log.DeleteConsumer(name); err != nil {
			st.js.log.Error("delete consumer state", "stream", st.name, "consumer", name, "err", err)
		}
	}
	return true
}

// removeConsumerKeepState stops a consumer so it can restart with a new
// config on the same stored state.
func (st *stream) removeConsumerKeepState(c *consumer) {
	st.mu.Lock()
	delete(st.consumers, c.name)
	st.mu.Unlock()
	c.close()
}

// close stops the consumer's goroutine and subscriptions and closes its
// state; waiting pulls are told the consumer is gone.
func (c *consumer) close() { c.closeWith("409 Consumer Deleted") }

// closeWith is close telling waiting pulls status (nats.go ends a pull on
// "consumer deleted" and on "server shutdown").
func (c *consumer) closeWith(status string) {
	if !c.claimClose() {
		return
	}
	close(c.stop)
	<-c.done
	c.release(status)
}

// claimClose marks the consumer closed; only the first caller gets true.
func (c *consumer) claimClose() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	return true
}

// release drops the subscriptions, answers waiting pulls and closes the
// state. Called once, by whoever claimed the close.
func (c *consumer) release(status string) {
	c.mu.Lock()
	waiting := c.waiting
	c.waiting = nil
	c.mu.Unlock()
	srv := c.st.js.srv
	srv.unsubscribeInternal(c.nextSub)
	srv.unsubscribeInternal(c.ackSub)
	if c.fcSub != nil {
		srv.unsubscribeInternal(c.fcSub)
	}
	for _, r := range waiting {
		srv.sendInternal(r.reply, "", statusHeader(status), nil)
	}
	if err := c.state.Close(); err != nil {
		c.st.js.log.Error("close consumer state", "consumer", c.name, "err", err)
	}
}

// notifyConsumers wakes every consumer after new messages were stored.
func (st *stream) notifyConsumers() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, c := range st.consumers {
		c.signal()
	}
}

// info snapshots the consumer for API responses.
func (c *consumer) info(typ string) consumerInfo {
	s := c.state.Info()
	c.mu.Lock()
	waiting := len(c.waiting)
	next := c.next
	dead := c.deadLettered
	c.mu.Unlock()
	floor := s.AckFloor
	if s.NumAckPending == 0 {
		floor = s.Delivered
	}
	return consumerInfo{
		Type:           typ,
		Stream:         c.st.name,
		Name:           c.name,
		Created:        c.created,
		Config:         c.cfg,
		Delivered:      sequencePair{Consumer: s.Delivered.Consumer, Stream: s.Delivered.Stream},
		AckFloor:       sequencePair{Consumer: floor.Consumer, Stream: floor.Stream},
		NumAckPending:  s.NumAckPending,
		NumRedelivered: s.NumRedelivered,
		NumWaiting:     waiting,
		NumPending:     c.st.countPending(next, c.cfg.filters()),
		Cluster:        &clusterInfo{Leader: c.st.js.srv.name},
		TS:             time.Now().UTC(),
		DeadLettered:   dead,
	}
}

// countPending counts stored messages at or after from that match the
// filters (none: all): the consumer's lag. Overlapping filters are not
// allowed, so the per-filter counts add up.
func (st *stream) countPending(from uint64, filters []string) uint64 {
	if len(filters) == 0 {
		return st.log.NumPending(from, "")
	}
	var n uint64
	for _, f := range filters {
		n += st.log.NumPending(from, f)
	}
	return n
}

func (js *jetStream) consumerInfo(r apiRequest, streamName, name string) {
	st := js.stream(streamName)
	if st == nil {
		js.respondErr(r.reply, typeConsumerInfo, errStreamNotFound())
		return
	}
	c := st.consumer(name)
	if c == nil {
		js.respondErr(r.reply, typeConsumerInfo, errConsumerNotFound())
		return
	}
	js.respond(r.reply, c.info(typeConsumerInfo))
}

func (st *stream) consumer(name string) *consumer {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.consumers[name]
}

func (js *jetStream) consumerDelete(r apiRequest, streamName, name string) {
	st := js.stream(streamName)
	if st == nil {
		js.respondErr(r.reply, typeConsumerDelete, errStreamNotFound())
		return
	}
	if !st.removeConsumer(name) {
		js.respondErr(r.reply, typeConsumerDelete, errConsumerNotFound())
		return
	}
	js.respond(r.reply, successResponse{Type: typeConsumerDelete, Success: true})
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

func (js *jetStream) consumerList(r apiRequest, streamName string) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeConsumerList, e)
		return
	}
	st := js.stream(streamName)
	if st == nil {
		js.respondErr(r.reply, typeConsumerList, errStreamNotFound())
		return
	}
	all := st.sortedConsumers()
	items := []consumerInfo{}
	for _, c := range page(all, req.Offset, listLimit) {
		items = append(items, c.info(""))
	}
	js.respond(r.reply, paged(typeConsumerList, "consumers", len(all), req.Offset, listLimit, items))
}

func (js *jetStream) consumerNames(r apiRequest, streamName string) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeConsumerNames, e)
		return
	}
	st := js.stream(streamName)
	if st == nil {
		js.respondErr(r.reply, typeConsumerNames, errStreamNotFound())
		return
	}
	all := st.sortedConsumers()
	names := []string{}
	for _, c := range page(all, req.Offset, namesLimit) {
		names = append(names, c.name)
	}
	js.respond(r.reply, paged(typeConsumerNames, "consumers", len(all), req.Offset, namesLimit, names))
}
