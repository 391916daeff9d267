package jetstream

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nuid"
)

// Consumer pause, as the reference has it (API level 1): a consumer with
// pause_until in the future delivers nothing until then; pulls wait,
// expire and get heartbeats as usual. $JS.API.CONSUMER.PAUSE.<stream>.
// <consumer> sets or clears it on a running consumer without restarting
// it, stores it with the consumer's config (a restart stays paused), and
// publishes a $JS.EVENT.ADVISORY.CONSUMER.PAUSE advisory.

const typeConsumerPause = "io.nats.jetstream.api.v1.consumer_pause_response"

type consumerPauseResponse struct {
	Type           string    `json:"type"`
	Error          *apiError `json:"error,omitempty"`
	Paused         bool      `json:"paused"`
	PauseUntil     time.Time `json:"pause_until"`
	PauseRemaining int64     `json:"pause_remaining,omitempty"` // ns
}

type consumerPauseAdvisory struct {
	Type       string    `json:"type"`
	ID         string    `json:"id"`
	Time       time.Time `json:"timestamp"`
	Stream     string    `json:"stream"`
	Consumer   string    `json:"consumer"`
	Paused     bool      `json:"paused"`
	PauseUntil time.Time `json:"pause_until,omitempty"`
}

func (svc *Service) consumerPause(r apiRequest, streamName, name string) (any, *apiError) {
	var req struct {
		PauseUntil time.Time `json:"pause_until"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	_, c, e := svc.lookupConsumer(streamName, name)
	if e != nil {
		return nil, e
	}
	until := req.PauseUntil.UTC()
	if err := c.setPause(until); err != nil {
		return nil, svc.storageFailed(typeConsumerPause, streamName, err)
	}
	now := svc.sh.now()
	resp := consumerPauseResponse{Type: typeConsumerPause, PauseUntil: until}
	if resp.Paused = now.Before(until); resp.Paused {
		resp.PauseRemaining = int64(until.Sub(now))
	}
	return resp, nil
}

// setPause stores the new pause_until with the consumer's config, then
// hands it to the consumer's goroutine. The zero time resumes.
func (c *consumer) setPause(until time.Time) error {
	cfg := c.config()
	cfg.PauseUntil = nil
	if !until.IsZero() {
		cfg.PauseUntil = &until
	}
	raw, err := storedWithOwner(cfg, cfg.owner)
	if err != nil {
		return err
	}
	if err := c.ledger.SetRaw(raw); err != nil {
		return err
	}
	if until.IsZero() {
		c.pausedUntil.Store(0)
	} else {
		c.pausedUntil.Store(until.UnixNano())
	}
	c.hold() // closed meanwhile: the stored config is what counts
	now := c.sh.now()
	adv := consumerPauseAdvisory{
		Type: "io.nats.jetstream.advisory.v1.consumer_pause", ID: nuid.Next(), Time: now.UTC(),
		Stream: c.stream, Consumer: c.name, Paused: now.Before(until),
	}
	if adv.Paused {
		adv.PauseUntil = until
	}
	b, _ := json.Marshal(adv) // plain fields cannot fail
	c.sh.core.Publish("$JS.EVENT.ADVISORY.CONSUMER.PAUSE."+c.stream+"."+c.name, "", nil, b)
	return nil
}

// config is the consumer's config as it stands: the one it started with,
// and its pause as last set.
func (c *consumer) config() consumerConfig {
	cfg := c.cfg
	cfg.PauseUntil = nil
	if p := c.pausedUntil.Load(); p != 0 {
		t := time.Unix(0, p).UTC()
		cfg.PauseUntil = &t
	}
	return cfg
}

// pauseInfo is what consumer info says of a pause at now.
func (c *consumer) pauseInfo(now time.Time) (bool, int64) {
	p := c.pausedUntil.Load()
	if p == 0 || now.UnixNano() >= p {
		return false, 0
	}
	return true, p - now.UnixNano()
}
