package client

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RetryPolicy is an exponential back-off with jitter. Worker uses it
// between deliveries of a failing message; Producer between publish
// attempts. The zero value means every default.
type RetryPolicy struct {
	// MaxAttempts counts every try, the first included: a Worker's
	// consumer gets max_deliver = MaxAttempts. Default 5.
	MaxAttempts int
	// InitialDelay is the wait after the first failure. Default 1 s.
	InitialDelay time.Duration
	// MaxDelay caps the un-jittered wait. Default 1 min.
	MaxDelay time.Duration
	// Multiplier grows the wait per failure. Default 2.
	Multiplier float64
	// Jitter spreads each wait by up to this fraction either way (0.2:
	// ±20%), so failing handlers do not retry in step. 0 means the
	// default 0.2; a negative value disables jitter. At most 1.
	Jitter float64
}

// DefaultRetryPolicy is what the zero RetryPolicy means.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, InitialDelay: time.Second, MaxDelay: time.Minute, Multiplier: 2, Jitter: 0.2}
}

// WithDefaults returns p with every unset field at its default.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.InitialDelay <= 0 {
		p.InitialDelay = d.InitialDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = max(d.MaxDelay, p.InitialDelay)
	}
	if p.Multiplier <= 0 {
		p.Multiplier = d.Multiplier
	}
	switch {
	case p.Jitter == 0:
		p.Jitter = d.Jitter
	case p.Jitter < 0:
		p.Jitter = 0
	}
	return p
}

func (p RetryPolicy) validate() error {
	if p.Jitter > 1 {
		return fmt.Errorf("client: retry jitter %v above 1: %w", p.Jitter, ErrBadConfig)
	}
	if p.Multiplier < 1 {
		return fmt.Errorf("client: retry multiplier %v below 1: %w", p.Multiplier, ErrBadConfig)
	}
	return nil
}

// Base is the un-jittered wait after the given failed attempt (1 for the
// first): InitialDelay × Multiplier^(attempt-1), at most MaxDelay. Call it
// on a policy with defaults applied.
func (p RetryPolicy) Base(attempt int) time.Duration {
	attempt = max(attempt, 1)
	d := float64(p.InitialDelay) * math.Pow(p.Multiplier, float64(attempt-1))
	if d >= float64(p.MaxDelay) || math.IsInf(d, 0) || math.IsNaN(d) {
		return p.MaxDelay
	}
	return time.Duration(d)
}

// Delay is the jittered wait after the given failed attempt, for r drawn
// uniformly from [0, 1): it lies in [Base×(1-Jitter), Base×(1+Jitter)).
// Call it on a policy with defaults applied.
func (p RetryPolicy) Delay(attempt int, r float64) time.Duration {
	base := float64(p.Base(attempt))
	return time.Duration(base * (1 + p.Jitter*(2*r-1)))
}

// Permanent marks err as not worth retrying: a Worker terminates the
// message at once with err's text as the reason, so it goes to the
// dead-letter subject after one attempt. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was made by
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
