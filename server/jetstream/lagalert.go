package jetstream

import (
	"encoding/json"
	"time"

	"github.com/nats-io/nuid"
)

// Lag alerts, bus's own (docs/api.md): a consumer with x_bus_lag_alert
// publishes an advisory when its lag crosses a threshold (messages not
// yet delivered, or the age of the oldest message it has not processed)
// and another when it is back under, so that a queue falling behind is
// noticed without a metrics system. One goroutine of the service checks
// every alerting consumer each lagCheckEvery, and sleeps when there is
// none.

const (
	lagCheckEvery   = time.Second
	lagAdvisoryBase = "$JS.EVENT.ADVISORY.CONSUMER.LAG"
	typeLagAdvisory = "io.bus.jetstream.advisory.v1.consumer_lag"
)

// lagAlert is a consumer's x_bus_lag_alert: either threshold, or both.
type lagAlert struct {
	// Messages alerts at this many messages not yet delivered
	// (num_pending).
	Messages uint64 `json:"messages,omitempty"`
	// Seconds alerts when the oldest message the consumer has not
	// processed (delivered and acked) was stored this long ago.
	Seconds float64 `json:"seconds,omitempty"`
}

func (a *lagAlert) check() *apiError {
	if a.Seconds < 0 || a.Messages == 0 && a.Seconds == 0 {
		return errConsumerCreate("x_bus_lag_alert needs messages > 0 or seconds > 0")
	}
	return nil
}

// lagAdvisory is published on $JS.EVENT.ADVISORY.CONSUMER.LAG.<stream>.
// <consumer> when an alert starts ("lagging") and ends ("recovered").
type lagAdvisory struct {
	Type       string    `json:"type"`
	ID         string    `json:"id"`
	Time       time.Time `json:"timestamp"`
	Stream     string    `json:"stream"`
	Consumer   string    `json:"consumer"`
	State      string    `json:"state"`
	NumPending uint64    `json:"num_pending"`
	AckPending int       `json:"num_ack_pending"`
	LagSeconds float64   `json:"lag_seconds"`
	Threshold  lagAlert  `json:"threshold"`
}

// lagWatch is the service goroutine that checks lag alerts.
func (svc *Service) lagWatch() {
	defer svc.workers.Done()
	timer := time.NewTimer(lagCheckEvery)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-svc.stop:
			return
		}
		if svc.checkLag() == 0 {
			select { // none alerting: sleep until one is created
			case <-svc.lagKick:
			case <-svc.stop:
				return
			}
		}
		timer.Reset(lagCheckEvery)
	}
}

// watchLag wakes lagWatch for a consumer created with an alert.
func (svc *Service) watchLag() {
	select {
	case svc.lagKick <- struct{}{}:
	default:
	}
}

// checkLag checks every consumer with an alert and returns how many
// there are.
func (svc *Service) checkLag() int {
	n := 0
	now := svc.sh.now()
	for _, st := range svc.sortedStreams() {
		for _, c := range st.sortedConsumers() {
			if c.cfg.LagAlert == nil {
				continue
			}
			n++
			c.checkLag(now)
		}
	}
	return n
}

// checkLag compares the consumer's lag with its alert and advises of a
// change.
func (c *consumer) checkLag(now time.Time) {
	a := c.cfg.LagAlert
	var m ConsumerMetrics
	c.metrics(&m)
	age := 0.0
	if !m.Oldest.IsZero() {
		age = max(now.Sub(m.Oldest).Seconds(), 0)
	}
	over := a.Messages > 0 && m.NumPending >= a.Messages || a.Seconds > 0 && age >= a.Seconds
	if over == c.lagging.Load() {
		return
	}
	c.lagging.Store(over)
	state := "recovered"
	if over {
		state = "lagging"
		c.sh.log.Warn("consumer lagging", "stream", c.stream, "consumer", c.name, "num_pending", m.NumPending, "lag_seconds", age)
	} else {
		c.sh.log.Info("consumer lag recovered", "stream", c.stream, "consumer", c.name, "num_pending", m.NumPending, "lag_seconds", age)
	}
	b, _ := json.Marshal(lagAdvisory{ // plain fields cannot fail
		Type: typeLagAdvisory, ID: nuid.Next(), Time: now.UTC(), Stream: c.stream, Consumer: c.name,
		State: state, NumPending: m.NumPending, AckPending: m.NumAckPending, LagSeconds: age, Threshold: *a,
	})
	c.sh.core.Publish(lagAdvisoryBase+"."+c.stream+"."+c.name, "", nil, b)
}
