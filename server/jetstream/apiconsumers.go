package jetstream

import (
	"strings"
	"sync"

	"github.com/nats-io/nuid"
)

// handleConsumer dispatches $JS.API.CONSUMER.* requests, and sends what
// their handlers return; t is the subject after "CONSUMER".
func (svc *Service) handleConsumer(r apiRequest, t []string) {
	switch {
	case len(t) == 2 && t[0] == "CREATE":
		// No name in the subject: the config names the consumer, or it is
		// an ephemeral one the server names (nats.go sends this for an
		// unnamed ordered consumer with several filters).
		svc.replyTo(r.reply, typeConsumerCreate).send(svc.consumerCreate(r, createLegacyEphemeral, t[1], "", ""))
	case len(t) >= 3 && t[0] == "CREATE":
		svc.replyTo(r.reply, typeConsumerCreate).send(svc.consumerCreate(r, createNamed, t[1], t[2], strings.Join(t[3:], ".")))
	case len(t) == 4 && t[0] == "DURABLE" && t[1] == "CREATE":
		svc.replyTo(r.reply, typeConsumerCreate).send(svc.consumerCreate(r, createLegacyDurable, t[2], t[3], ""))
	case len(t) == 3 && t[0] == "INFO":
		svc.replyTo(r.reply, typeConsumerInfo).send(svc.consumerInfo(t[1], t[2]))
	case len(t) == 3 && t[0] == "DELETE":
		svc.replyTo(r.reply, typeConsumerDelete).send(svc.consumerDelete(t[1], t[2]))
	case len(t) == 3 && t[0] == "PAUSE":
		svc.replyTo(r.reply, typeConsumerPause).send(svc.consumerPause(r, t[1], t[2]))
	case len(t) == 3 && t[0] == "UNPIN":
		svc.replyTo(r.reply, typeConsumerUnpin).send(svc.consumerUnpin(r, t[1], t[2]))
	case len(t) == 3 && t[0] == "RESET":
		svc.replyTo(r.reply, typeConsumerReset).send(svc.consumerReset(r, t[1], t[2]))
	case len(t) == 2 && t[0] == "LIST":
		svc.replyTo(r.reply, typeConsumerList).send(svc.consumerList(r, t[1]))
	case len(t) == 2 && t[0] == "NAMES":
		svc.replyTo(r.reply, typeConsumerNames).send(svc.consumerNames(r, t[1]))
	}
}

// createSubject is which of the three create subjects a request came on;
// each has its own rule for the name in the subject against the names in
// the config, as the reference's.
type createSubject int

const (
	createLegacyEphemeral createSubject = iota // CREATE.<stream>: the config names it, or no one
	createNamed                                // CREATE.<stream>.<name>[.<filter>]: the subject names it
	createLegacyDurable                        // DURABLE.CREATE.<stream>.<durable>
)

// nameFromSubject applies kind's naming rule to cfg: the subject's name
// wins over the config's name, a durable must be the subject's name, a
// durable create must name a durable and a legacy ephemeral one must not.
func nameFromSubject(kind createSubject, name string, cfg *consumerConfig) *apiError {
	switch kind {
	case createLegacyEphemeral:
		if cfg.Durable != "" {
			return newAPIError(400, 10020, "consumer expected to be ephemeral but a durable name was set in request")
		}
		return nil
	case createLegacyDurable:
		if cfg.Durable == "" {
			return newAPIError(400, 10018, "consumer expected to be durable but a durable name was not set")
		}
	}
	if cfg.Durable != "" && cfg.Durable != name {
		return errDurableMismatch()
	}
	cfg.Name = name
	return nil
}

func (svc *Service) consumerCreate(r apiRequest, kind createSubject, streamName, name, filter string) (any, *apiError) {
	var req struct {
		Stream string         `json:"stream_name"`
		Config consumerConfig `json:"config"`
		Action string         `json:"action"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	if e := unknownField(req.Config.extra, referenceConsumerFields); e != nil {
		return nil, e
	}
	st, e := svc.lookup(streamName)
	if e != nil {
		return nil, e
	}
	if req.Stream != "" && req.Stream != streamName {
		return nil, errStreamNameMismatch()
	}
	cfg := req.Config
	if filter != "" && filter != cfg.FilterSubject {
		return nil, errFilterMismatch()
	}
	if e := nameFromSubject(kind, name, &cfg); e != nil {
		return nil, e
	}
	ident, e := st.adaptSourcingConsumer(&cfg, r.hdr)
	if e != nil {
		return nil, e
	}
	if cfg.Name == "" && cfg.Durable == "" {
		cfg.Name = nuid.Next()
	}
	limits := svc.sh.bound().limits
	limits.consumerDefaults(&cfg)
	if e := cfg.normalize(st.config()); e != nil {
		return nil, e
	}
	if e := limits.checkConsumer(&cfg); e != nil {
		return nil, e
	}
	cfg.Metadata = withRequiredLevel(cfg.Metadata, cfg.requiredLevel())
	if e := svc.mayConsume(r.from, &cfg, st.config()); e != nil {
		return nil, e
	}
	existed := st.consumer(cfg.Name) != nil
	answered := make(chan struct{}) // the consumer started here waits for its reply
	release := sync.OnceFunc(func() { close(answered) })
	c, e := st.createConsumerAnswered(cfg, req.Action, answered)
	if e != nil {
		return nil, e
	}
	if cfg.LagAlert != nil {
		svc.watchLag()
	}
	if existed && cfg.Sourcing && cfg.Durable != "" { // a new one starts where its policy says
		release() // the reset is a step of the consumer's; its sourcer takes no reply
		if e := c.restartSourcing(); e != nil {
			return nil, e
		}
	}
	var resp any = c.info(typeConsumerCreate)
	if ident != "" {
		resp = headedResponse{resp, statusHeader("", "Nats-Stream-Identity", ident)}
	}
	return followedBy{resp, func() {
		release()
		if !existed {
			svc.sh.adviseConsumer(st.name, cfg.Name, actionCreate)
		}
	}}, nil
}

func (svc *Service) consumerInfo(streamName, name string) (any, *apiError) {
	_, c, e := svc.lookupConsumer(streamName, name)
	if e != nil {
		return nil, e
	}
	return c.info(typeConsumerInfo), nil
}

func (svc *Service) consumerDelete(streamName, name string) (any, *apiError) {
	st, e := svc.lookup(streamName)
	if e != nil {
		return nil, e
	}
	if !st.removeConsumer(name) {
		return nil, errConsumerNotFound()
	}
	deleted := successResponse{Type: typeConsumerDelete, Success: true}
	return followedBy{deleted, func() { svc.sh.adviseConsumer(streamName, name, actionDelete) }}, nil
}

func (svc *Service) consumerList(r apiRequest, streamName string) (any, *apiError) {
	all, offset, e := svc.consumersFor(r, streamName)
	if e != nil {
		return nil, e
	}
	return listPage(typeConsumerList, "consumers", all, offset, listLimit, func(c *consumer) consumerInfo { return c.info("") }), nil
}

func (svc *Service) consumerNames(r apiRequest, streamName string) (any, *apiError) {
	all, offset, e := svc.consumersFor(r, streamName)
	if e != nil {
		return nil, e
	}
	return listPage(typeConsumerNames, "consumers", all, offset, namesLimit, func(c *consumer) string { return c.name }), nil
}

// consumersFor reads a LIST or NAMES request for a stream's consumers
// and returns them sorted, with the requested offset.
func (svc *Service) consumersFor(r apiRequest, streamName string) ([]*consumer, int, *apiError) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		return nil, 0, e
	}
	st, e := svc.lookup(streamName)
	if e != nil {
		return nil, 0, e
	}
	return st.publicConsumers(), req.Offset, nil
}
