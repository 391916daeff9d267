package jetstream

import (
	"encoding/json"
	"math"
	"time"

	"github.com/nats-io/nuid"
)

// When users' rights change (a reload, or a restart with another
// configuration), every stream and consumer is checked again against its
// owner's rights as they are now (owner.go). What now exceeds them is
// suspended: a stream's republish stops and its sources and mirror stop
// copying; a consumer delivers nothing (pulls wait and expire as while
// paused). Each suspension is logged, shown in info (x_bus_suspended)
// and advised on $JS.EVENT.ADVISORY.{STREAM,CONSUMER}.SUSPENDED, and
// lifted, with a RESUMED advisory, once the rights cover it again or an
// update by someone whose rights do makes that user the owner. Nothing
// stored is touched.

// RightsChanged checks every stream and consumer against its owner's
// rights as they are now. The server calls it after a reload changed the
// authorization; Start runs it once over what was loaded.
func (svc *Service) RightsChanged() {
	svc.sh.rightsGen.Add(1)
	svc.checkOwners()
}

// checkOwners checks every stream and consumer against its owner's
// rights: after they changed, or after a stream update changed what
// streams may hold. Updates are rare and the check is in memory.
func (svc *Service) checkOwners() {
	svc.ownersMu.Lock() // one check at a time: each suspends or resumes what the last one left
	defer svc.ownersMu.Unlock()
	for _, st := range svc.sortedStreams() {
		st.checkOwner()
		st.schedulesRightsChanged() // held @at schedules are tried again
	}
}

// ownerRights are the current rights of owner, or the error that
// suspends what it owns when it is no longer a user.
func (sh *shared) ownerRights(owner string) (Rights, *apiError) {
	rights, ok := sh.core.UserRights(owner)
	if !ok {
		return nil, newAPIError(403, errCodePermissions, "owner %q is no longer a configured user", owner)
	}
	return rights, nil
}

// checkOwner suspends or resumes the stream's own flows and each of its
// consumers by their owners' current rights.
func (st *stream) checkOwner() {
	cfg := st.config()
	owner, e := st.sh.ownerRights(cfg.owner)
	capture := e
	if e == nil {
		e = st.sh.streamAllowed(owner, cfg)
		capture = st.sh.authorize(owner, transformFlow(cfg))
	}
	if cfg.SubjectTransform == nil {
		capture = nil
	}
	st.setSuspended(cfg, e, capture)
	for _, c := range st.sortedConsumers() {
		c.checkOwner(cfg)
	}
}

// setSuspended suspends the stream's flows with e, or resumes them when e
// is nil; capture, when set, also refuses what the stream would capture
// through a transform its owner may no longer read.
func (st *stream) setSuspended(cfg streamConfig, e, capture *apiError) {
	prevCapture := st.captureRefused.Swap(capture)
	prev := st.suspended.Swap(e)
	if (prevCapture == nil) != (capture == nil) || (prev == nil) != (e == nil) {
		st.setTransforms(cfg) // republish off, capture refused, as they now stand
	}
	if (prev == nil) == (e == nil) {
		return
	}
	if e != nil {
		st.stopSourcing()
		st.sh.log.Warn("stream suspended: its owner's rights no longer cover it", "stream", st.name, "owner", cfg.owner, "err", e.Description)
	} else {
		st.startSourcing()
		st.sh.log.Info("stream resumed: its owner's rights cover it again", "stream", st.name, "owner", cfg.owner)
	}
	st.sh.adviseSuspended(st.name, "", cfg.owner, e)
}

// checkOwner suspends or resumes the consumer by its owner's rights over
// what it reads of a stream configured as scfg and where it publishes.
func (c *consumer) checkOwner(scfg streamConfig) {
	cfg := c.config()
	owner, e := c.sh.ownerRights(cfg.owner)
	if e == nil {
		e = c.sh.authorize(owner, c.sh.consumerFlow(cfg, scfg))
	}
	prev := c.suspended.Swap(e)
	if (prev == nil) == (e == nil) {
		return
	}
	c.hold()
	if e != nil {
		c.sh.log.Warn("consumer suspended: its owner's rights no longer cover it", "stream", c.stream, "consumer", c.name, "owner", cfg.owner, "err", e.Description)
	} else {
		c.sh.log.Info("consumer resumed: its owner's rights cover it again", "stream", c.stream, "consumer", c.name, "owner", cfg.owner)
	}
	c.sh.adviseSuspended(c.stream, c.name, cfg.owner, e)
}

// suspendedUntil is the pause a suspended consumer's machine holds.
var suspendedUntil = time.Unix(0, math.MaxInt64).UTC()

// hold hands the consumer's goroutine what holds its deliveries back: a
// suspension, else the pause as last set, else nothing.
func (c *consumer) hold() {
	until := time.Time{}
	if p := c.pausedUntil.Load(); p != 0 {
		until = time.Unix(0, p).UTC()
	}
	if c.suspended.Load() != nil {
		until = suspendedUntil
	}
	select {
	case c.pause <- until:
	case <-c.done: // closed meanwhile
	}
}

// suspendedAdvisory is published on $JS.EVENT.ADVISORY.STREAM.
// {SUSPENDED,RESUMED}.<stream> and $JS.EVENT.ADVISORY.CONSUMER.
// {SUSPENDED,RESUMED}.<stream>.<consumer> (bus's own; docs/api.md).
type suspendedAdvisory struct {
	Type     string    `json:"type"`
	ID       string    `json:"id"`
	Time     time.Time `json:"timestamp"`
	Stream   string    `json:"stream"`
	Consumer string    `json:"consumer,omitempty"`
	Owner    string    `json:"owner"`
	Error    *apiError `json:"error,omitempty"`
}

func (sh *shared) adviseSuspended(stream, consumer, owner string, e *apiError) {
	event, kind := "RESUMED", "stream"
	if e != nil {
		event = "SUSPENDED"
	}
	subject := "$JS.EVENT.ADVISORY.STREAM." + event + "." + stream
	if consumer != "" {
		kind = "consumer"
		subject = "$JS.EVENT.ADVISORY.CONSUMER." + event + "." + stream + "." + consumer
	}
	b, _ := json.Marshal(suspendedAdvisory{ // plain fields cannot fail
		Type: "io.bus.jetstream.advisory.v1." + kind + "_" + map[bool]string{true: "suspended", false: "resumed"}[e != nil],
		ID:   nuid.Next(), Time: sh.now().UTC(), Stream: stream, Consumer: consumer, Owner: owner, Error: e,
	})
	sh.core.Publish(subject, "", nil, b)
}
