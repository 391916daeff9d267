package jetstream

import (
	"time"

	"github.com/nats-io/nuid"

	"github.com/bus-dev/bus/jetlog"
)

// The origin's side of sourcing (ADR-60, API levels 4 and 5), as the
// reference serves a 2.14+ sourcing stream's consumer create: a direct
// sourcing consumer with a stable name (JS_SRC_…, JS_MIRROR_…).
//
//   - On an interest or work-queue origin it becomes a durable consumer
//     acked by flow control (ackflowcontrol.go): what the sourcer says
//     it stored is acked, so the origin drops it, and a message is not
//     lost to a sourcer that went away before storing it. Asked for
//     again (the sourcer restarted or lost its link) it is the same
//     consumer, keeping its deliver policy, started over after its ack
//     floor.
//   - On a limits origin it stays direct (ack none, its inactive
//     threshold), under its name with a random suffix: the stable name
//     would otherwise clash with the sourcer's own earlier consumer,
//     which is left to its inactive threshold.
//
// Stream identity (level 5): the answer to a direct or sourcing create
// names the origin's identity in Nats-Stream-Identity (a hash of when it
// was created), and a create that expects another identity is refused
// (10225): the sourcer then knows the origin was deleted and made again,
// and starts over rather than waiting for seqs the new one will reuse.

// sourcing reports whether the config is a sourcing stream's consumer.
func (c *consumerConfig) sourcing() bool { return c.Direct || c.Sourcing }

// identity is the stream's identity, as the reference derives it.
func (st *stream) identity() string {
	return tokenHash(st.created.UTC().Format(time.RFC3339Nano))
}

// adaptSourcingConsumer applies the rules above to a create's config; it
// returns the identity to answer with ("" for other consumers).
func (st *stream) adaptSourcingConsumer(cfg *consumerConfig, hdr []byte) (string, *apiError) {
	if !cfg.sourcing() {
		return "", nil
	}
	if cfg.Direct && cfg.Sourcing && cfg.Name != "" {
		if st.config().Retention != jetlog.RetentionLimits {
			cfg.Direct, cfg.Durable = false, cfg.Name
			cfg.AckPolicy, cfg.AckWait, cfg.MaxDeliver, cfg.InactiveThreshold = AckFlowControl, 0, 0, 0
		} else {
			cfg.Name += "-" + tokenHash(nuid.Next())
		}
	}
	ident := st.identity()
	if want, ok := headerValue(hdr, "Nats-Stream-Identity"); ok && want != "" && want != ident {
		return "", newAPIError(400, 10225, "consumer's stream identity does not match: %s", ident)
	}
	if existing := st.consumer(cfg.Name); existing != nil && cfg.Sourcing && cfg.Durable != "" {
		cfg.DeliverPolicy, cfg.OptStartSeq, cfg.OptStartTime = existing.cfg.DeliverPolicy, existing.cfg.OptStartSeq, existing.cfg.OptStartTime
	}
	return ident, nil
}

// restartSourcing starts a durable sourcing consumer over after its ack
// floor, as the reference does on each create of one: what was delivered
// and not acked (the sourcer did not store it) comes again.
func (c *consumer) restartSourcing() *apiError {
	rr := resetRequest{done: make(chan resetResult, 1)}
	select {
	case c.resets <- rr:
	case <-c.done:
		return errConsumerNotFound()
	}
	if res := <-rr.done; res.err != nil {
		return newAPIError(400, 10204, "invalid reset: %v", res.err)
	}
	return nil
}
