package jetstream

import (
	"strings"

	"github.com/nats-io/nuid"
)

// handleConsumer dispatches $JS.API.CONSUMER.* requests; t is the subject
// after "CONSUMER".
func (svc *Service) handleConsumer(r apiRequest, t []string) {
	switch {
	case len(t) == 2 && t[0] == "CREATE":
		// No name in the subject: the config names the consumer, or it is
		// an ephemeral one the server names (nats.go sends this for an
		// unnamed ordered consumer with several filters).
		svc.consumerCreate(r, createLegacyEphemeral, t[1], "", "")
	case len(t) >= 3 && t[0] == "CREATE":
		svc.consumerCreate(r, createNamed, t[1], t[2], strings.Join(t[3:], "."))
	case len(t) == 4 && t[0] == "DURABLE" && t[1] == "CREATE":
		svc.consumerCreate(r, createLegacyDurable, t[2], t[3], "")
	case len(t) == 3 && t[0] == "INFO":
		svc.consumerInfo(r, t[1], t[2])
	case len(t) == 3 && t[0] == "DELETE":
		svc.consumerDelete(r, t[1], t[2])
	case len(t) == 3 && t[0] == "PAUSE":
		svc.consumerPause(r, t[1], t[2])
	case len(t) == 3 && t[0] == "UNPIN":
		svc.consumerUnpin(r, t[1], t[2])
	case len(t) == 3 && t[0] == "RESET":
		svc.consumerReset(r, t[1], t[2])
	case len(t) == 2 && t[0] == "LIST":
		svc.consumerList(r, t[1])
	case len(t) == 2 && t[0] == "NAMES":
		svc.consumerNames(r, t[1])
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

func (svc *Service) consumerCreate(r apiRequest, kind createSubject, streamName, name, filter string) {
	var req struct {
		Stream string         `json:"stream_name"`
		Config consumerConfig `json:"config"`
		Action string         `json:"action"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if e := unknownField(req.Config.extra, referenceConsumerFields); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	st, e := svc.lookup(streamName)
	if e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if req.Stream != "" && req.Stream != streamName {
		svc.respondErr(r.reply, typeConsumerCreate, errStreamNameMismatch())
		return
	}
	cfg := req.Config
	if filter != "" && filter != cfg.FilterSubject {
		svc.respondErr(r.reply, typeConsumerCreate, errFilterMismatch())
		return
	}
	if e := nameFromSubject(kind, name, &cfg); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if cfg.Name == "" && cfg.Durable == "" {
		cfg.Name = nuid.Next()
	}
	svc.sh.limits.consumerDefaults(&cfg)
	if e := cfg.normalize(st.config()); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if e := svc.sh.limits.checkConsumer(&cfg); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if e := svc.mayConsume(r.from, &cfg, st.config()); e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	existed := st.consumer(cfg.Name) != nil
	c, e := st.createConsumer(cfg, req.Action)
	if e != nil {
		svc.respondErr(r.reply, typeConsumerCreate, e)
		return
	}
	if cfg.LagAlert != nil {
		svc.watchLag()
	}
	svc.respond(r.reply, c.info(typeConsumerCreate))
	if !existed {
		svc.sh.adviseConsumer(st.name, cfg.Name, actionCreate)
	}
}

func (svc *Service) consumerInfo(r apiRequest, streamName, name string) {
	st, e := svc.lookup(streamName)
	if e != nil {
		svc.respondErr(r.reply, typeConsumerInfo, e)
		return
	}
	c := st.consumer(name)
	if c == nil {
		svc.respondErr(r.reply, typeConsumerInfo, errConsumerNotFound())
		return
	}
	svc.respond(r.reply, c.info(typeConsumerInfo))
}

func (svc *Service) consumerDelete(r apiRequest, streamName, name string) {
	st, e := svc.lookup(streamName)
	if e != nil {
		svc.respondErr(r.reply, typeConsumerDelete, e)
		return
	}
	if !st.removeConsumer(name) {
		svc.respondErr(r.reply, typeConsumerDelete, errConsumerNotFound())
		return
	}
	svc.respond(r.reply, successResponse{Type: typeConsumerDelete, Success: true})
	svc.sh.adviseConsumer(streamName, name, actionDelete)
}

func (svc *Service) consumerList(r apiRequest, streamName string) {
	if all, offset, ok := svc.consumersFor(r, streamName, typeConsumerList); ok {
		respondPage(svc, r.reply, typeConsumerList, "consumers", all, offset, listLimit, func(c *consumer) consumerInfo { return c.info("") })
	}
}

func (svc *Service) consumerNames(r apiRequest, streamName string) {
	if all, offset, ok := svc.consumersFor(r, streamName, typeConsumerNames); ok {
		respondPage(svc, r.reply, typeConsumerNames, "consumers", all, offset, namesLimit, func(c *consumer) string { return c.name })
	}
}

// consumersFor reads a LIST or NAMES request for a stream's consumers
// and returns them sorted with the requested offset, or answers the
// error and reports false.
func (svc *Service) consumersFor(r apiRequest, streamName, typ string) ([]*consumer, int, bool) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		svc.respondErr(r.reply, typ, e)
		return nil, 0, false
	}
	st, e := svc.lookup(streamName)
	if e != nil {
		svc.respondErr(r.reply, typ, e)
		return nil, 0, false
	}
	return st.sortedConsumers(), req.Offset, true
}
