package conf

import (
	"fmt"
	"slices"
	"strings"
)

// The feature_flags block, as nats-server 2.12+ takes it: flag names with
// true or false. bus knows one of the reference's flags:
//
//	feature_flags {
//	  js_ack_fc_v2: true   # consumers' deliveries carry the v2 ack subjects
//	}
//
// js_ack_fc_v2 gives deliveries and flow-control requests the v2 form,
// $JS.ACK.<domain>.<account hash>.<stream>.<consumer>.… (JetStream's
// AckFormatV2); acks in both forms are taken either way. Any other flag is
// refused, naming it.

// FeatureFlags is the feature_flags block.
type FeatureFlags struct {
	// JSAckFormatV2 is js_ack_fc_v2: deliveries carry the v2 ack
	// subjects.
	JSAckFormatV2 bool
}

// featureFlags are the flags bus knows, each with what it sets.
var featureFlags = map[string]func(*FeatureFlags, bool){
	"js_ack_fc_v2": func(f *FeatureFlags, on bool) { f.JSAckFormatV2 = on },
}

// featureFlagsValue binds the block.
type featureFlagsValue struct{ p *FeatureFlags }

func (v featureFlagsValue) set(raw any) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not a block of flags", describe(raw))
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var errs []string
	for _, k := range names {
		apply, known := featureFlags[strings.ToLower(k)]
		on, isBool := m[k].(bool)
		switch {
		case !known:
			errs = append(errs, fmt.Sprintf("%s: bus has no such feature flag (it knows %s); remove it", k, strings.Join(sortedFlagNames(), ", ")))
		case !isBool:
			errs = append(errs, fmt.Sprintf("%s: %s is not true or false", k, describe(m[k])))
		default:
			apply(v.p, on)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func sortedFlagNames() []string {
	names := make([]string, 0, len(featureFlags))
	for k := range featureFlags {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (v featureFlagsValue) String() string {
	if v.p.JSAckFormatV2 {
		return "{js_ack_fc_v2: true}"
	}
	return ""
}

func (v featureFlagsValue) kind() string { return "block" }
