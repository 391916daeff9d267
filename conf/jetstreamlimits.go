package conf

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// JetStreamLimits is the jetstream block's limits block, nats-server's
// JSLimitOpts: bounds on what clients may set, for the whole server.
// Zero leaves a bound unset (nats-server's own default where it has
// one).
type JetStreamLimits struct {
	// MaxAckPending is the most max_ack_pending a consumer may set, and
	// caps the default (1000) of those that set none.
	MaxAckPending int
	// MaxRequestBatch is the most max_batch a pull consumer may set, and
	// the max_batch of those that set none.
	MaxRequestBatch int
	// DuplicateWindow is the longest duplicate_window a stream may set,
	// and caps the default (2m).
	DuplicateWindow time.Duration
	// DefaultMaxConsumers bounds the consumers of a stream that sets no
	// max_consumers: 0 is nats-server's 1000, -1 none.
	DefaultMaxConsumers int
	// MaxHAAssets bounds replicated streams and consumers in a cluster;
	// bus has no replicas, so it is only reported.
	MaxHAAssets int
	// Batch bounds atomic batch publishing.
	Batch JetStreamBatchLimits
}

// JetStreamBatchLimits is the limits block's batch block; zero leaves
// nats-server's default (50, 1000, 1000, 10s) and bus's own 256MB for
// MaxStagedBytes, the bytes all open batches may stage together.
type JetStreamBatchLimits struct {
	MaxInflightPerStream int
	MaxInflightTotal     int
	MaxMsgs              int
	Timeout              time.Duration
	MaxStagedBytes       int64
}

// minDuplicateLimit is the shortest duplicate_window limit accepted: a
// stream's window below 100ms is refused, so a lower limit would leave
// every stream that takes the default refused.
const minDuplicateLimit = 100 * time.Millisecond

// jetstreamLimits reads the limits block into p, or changes nothing and
// names every bad key and value.
func jetstreamLimits(p *JetStreamLimits, raw any) error {
	next := *p
	err := block(raw, map[string]func(any) error{
		"max_ack_pending":       countSetter(&next.MaxAckPending, 0),
		"max_request_batch":     countSetter(&next.MaxRequestBatch, 0),
		"max_ha_assets":         countSetter(&next.MaxHAAssets, 0),
		"default_max_consumers": countSetter(&next.DefaultMaxConsumers, -1),
		"duplicate_window": func(v any) error {
			d, ok := duration(v)
			switch {
			case !ok:
				return fmt.Errorf("%s is not a duration", describe(v))
			case d != 0 && d < minDuplicateLimit:
				return fmt.Errorf("%s is less than %s (0 means no limit)", formatDuration(d), formatDuration(minDuplicateLimit))
			}
			next.DuplicateWindow = d
			return nil
		},
		"batch": func(v any) error {
			b := next.Batch
			err := block(v, map[string]func(any) error{
				"max_inflight_per_stream": countSetter(&b.MaxInflightPerStream, 0),
				"max_inflight_total":      countSetter(&b.MaxInflightTotal, 0),
				"max_msgs":                countSetter(&b.MaxMsgs, 0),
				"max_staged_bytes": func(v any) error {
					n := int64(0)
					if err := (sizeValue{&n}).set(v); err != nil {
						return err
					}
					if n < 0 {
						return fmt.Errorf("%d is negative", n)
					}
					b.MaxStagedBytes = n
					return nil
				},
				"timeout": func(v any) error {
					d, ok := duration(v)
					if !ok || d < 0 {
						return fmt.Errorf("%s is not a duration", describe(v))
					}
					b.Timeout = d
					return nil
				},
			})
			if err == nil {
				next.Batch = b
			}
			return err
		},
	})
	if err != nil {
		return err
	}
	*p = next
	return nil
}

// countSetter sets a whole number of at least low (0, or -1 where -1
// means none).
func countSetter(p *int, low int64) func(any) error {
	return func(v any) error {
		n, ok := number(v)
		switch {
		case !ok || n > math.MaxInt32:
			return fmt.Errorf("%s is not a whole number", describe(v))
		case n < low && low == 0:
			return fmt.Errorf("%d is negative (0 means no limit)", n)
		case n < low:
			return fmt.Errorf("%d is less than %d (-1 means no limit)", n, low)
		}
		*p = int(n)
		return nil
	}
}

// block applies a map's keys (any case) with setters, in key order, and
// names every key that is unknown or whose value is refused.
func block(raw any, setters map[string]func(any) error) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not a block", describe(raw))
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var errs []string
	for _, k := range names {
		set, ok := setters[strings.ToLower(k)]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: %v", k, unknownKey(k, sortedKeys(setters))))
			continue
		}
		if err := set(m[k]); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
