package prom

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bus-dev/bus/client"
)

// Metrics implements client.Metrics with Prometheus collectors. It is
// safe for concurrent use.
type Metrics struct {
	processed    *prometheus.CounterVec
	failed       *prometheus.CounterVec
	retried      *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	retryDelay   *prometheus.HistogramVec
}

// Options configures New.
type Options struct {
	// Registerer receives the collectors; required (pass
	// prometheus.DefaultRegisterer to use the global registry).
	Registerer prometheus.Registerer
	// Namespace prefixes metric names. Default "bus_client".
	Namespace string
	// Buckets of the latency histogram, in seconds. Default
	// prometheus.DefBuckets.
	Buckets []float64
}

// New creates the collectors and registers them.
func New(opts Options) (*Metrics, error) {
	if opts.Registerer == nil {
		return nil, fmt.Errorf("prom: new: nil Registerer: %w", client.ErrBadConfig)
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "bus_client"
	}
	if opts.Buckets == nil {
		opts.Buckets = prometheus.DefBuckets
	}
	labels := []string{"stream", "consumer"}
	counter := func(name, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, append(labels, extra...))
	}
	m := &Metrics{
		processed:    counter("processed_total", "Messages whose handler returned nil and that were acked."),
		failed:       counter("failed_total", "Handler runs that returned an error or panicked."),
		retried:      counter("retried_total", "Messages NAKed to be retried after a back-off."),
		deadLettered: counter("dead_lettered_total", "Messages given up on, by reason.", "reason"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "handler_seconds", Help: "Handler latency, any outcome.", Buckets: opts.Buckets,
		}, labels),
		retryDelay: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "retry_delay_seconds", Help: "Back-off chosen per retry.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12),
		}, labels),
	}
	for _, c := range []prometheus.Collector{m.processed, m.failed, m.retried, m.deadLettered, m.latency, m.retryDelay} {
		if err := opts.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("prom: register: %w", err)
		}
	}
	return m, nil
}

// Processed counts an acked message and observes its latency.
func (m *Metrics) Processed(l client.Labels, latency time.Duration) {
	m.processed.WithLabelValues(l.Stream, l.Consumer).Inc()
	m.latency.WithLabelValues(l.Stream, l.Consumer).Observe(latency.Seconds())
}

// Failed counts a failed handler run and observes its latency.
func (m *Metrics) Failed(l client.Labels, latency time.Duration) {
	m.failed.WithLabelValues(l.Stream, l.Consumer).Inc()
	m.latency.WithLabelValues(l.Stream, l.Consumer).Observe(latency.Seconds())
}

// Retried counts a retry and observes its back-off.
func (m *Metrics) Retried(l client.Labels, delay time.Duration) {
	m.retried.WithLabelValues(l.Stream, l.Consumer).Inc()
	m.retryDelay.WithLabelValues(l.Stream, l.Consumer).Observe(delay.Seconds())
}

// DeadLettered counts a message given up on.
func (m *Metrics) DeadLettered(l client.Labels, reason string) {
	m.deadLettered.WithLabelValues(l.Stream, l.Consumer, reason).Inc()
}

var _ client.Metrics = (*Metrics)(nil)
