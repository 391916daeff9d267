package conf

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

// featureFlagsValue binds the block: the flags bus knows, in any case;
// any other is refused by name (block).
type featureFlagsValue struct{ p *FeatureFlags }

func (v featureFlagsValue) set(raw any) error {
	next := *v.p
	err := block(raw, map[string]func(any) error{
		"js_ack_fc_v2": boolValue{&next.JSAckFormatV2}.set,
	})
	if err != nil {
		return err
	}
	*v.p = next
	return nil
}

func (v featureFlagsValue) String() string {
	if v.p.JSAckFormatV2 {
		return "{js_ack_fc_v2: true}"
	}
	return ""
}

func (v featureFlagsValue) kind() string { return "block" }
