package client

import "time"

// Labels say which worker a metric is about.
type Labels struct {
	Stream   string
	Consumer string
}

// Metrics receives a Worker's counts and timings. Methods are called from
// handler goroutines concurrently and must not block. The sub-package
// client/prom implements it for Prometheus.
type Metrics interface {
	// Processed: a handler returned nil and the message was acked.
	Processed(l Labels, latency time.Duration)
	// Failed: a handler returned an error (or panicked); a Retried or
	// DeadLettered call follows for the same message.
	Failed(l Labels, latency time.Duration)
	// Retried: the message was NAKed to come back after delay.
	Retried(l Labels, delay time.Duration)
	// DeadLettered: the worker gave up on the message; reason is
	// "terminated" (a Permanent error or an undecodable message) or
	// "max_deliveries" (the last attempt failed).
	DeadLettered(l Labels, reason string)
}

// NopMetrics discards everything; it is the default.
type NopMetrics struct{}

// Processed does nothing.
func (NopMetrics) Processed(Labels, time.Duration) {}

// Failed does nothing.
func (NopMetrics) Failed(Labels, time.Duration) {}

// Retried does nothing.
func (NopMetrics) Retried(Labels, time.Duration) {}

// DeadLettered does nothing.
func (NopMetrics) DeadLettered(Labels, string) {}
