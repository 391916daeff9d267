package jetstream

import (
	"fmt"
	"strconv"
)

// The consumer policies, parsed once when a config is decoded: an unknown
// name fails decoding as the reference's does ("can not unmarshal"), and
// the rest of the package switches on constants, never on strings. The
// zero value of each is the reference's default.

// AckPolicy says which deliveries need an ack.
type AckPolicy uint8

// Ack policies, in JSON "none", "all", "explicit", "flow_control" (API
// level 4, ackflowcontrol.go: acked as all is, by the answers to flow
// control).
const (
	AckNone AckPolicy = iota
	AckAll
	AckExplicit
	AckFlowControl
)

var ackPolicyNames = []string{"none", "all", "explicit", "flow_control"}

func (p AckPolicy) String() string               { return policyName(ackPolicyNames, uint8(p)) }
func (p AckPolicy) MarshalJSON() ([]byte, error) { return marshalPolicy(ackPolicyNames, uint8(p)) }
func (p *AckPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalPolicy(ackPolicyNames, b, (*uint8)(p))
}

// DeliverPolicy says where a new consumer starts.
type DeliverPolicy uint8

// Deliver policies, in JSON "all", "last", "new", "by_start_sequence",
// "by_start_time", "last_per_subject".
const (
	DeliverAll DeliverPolicy = iota
	DeliverLast
	DeliverNew
	DeliverByStartSequence
	DeliverByStartTime
	DeliverLastPerSubject
)

var deliverPolicyNames = []string{"all", "last", "new", "by_start_sequence", "by_start_time", "last_per_subject"}

func (p DeliverPolicy) String() string { return policyName(deliverPolicyNames, uint8(p)) }
func (p DeliverPolicy) MarshalJSON() ([]byte, error) {
	return marshalPolicy(deliverPolicyNames, uint8(p))
}
func (p *DeliverPolicy) UnmarshalJSON(b []byte) error {
	if string(b) == `"undefined"` { // the reference reads it as all
		*p = DeliverAll
		return nil
	}
	return unmarshalPolicy(deliverPolicyNames, b, (*uint8)(p))
}

// ReplayPolicy says how fast stored messages are delivered.
type ReplayPolicy uint8

// Replay policies, in JSON "instant", "original".
const (
	ReplayInstant ReplayPolicy = iota
	ReplayOriginal
)

var replayPolicyNames = []string{"instant", "original"}

func (p ReplayPolicy) String() string { return policyName(replayPolicyNames, uint8(p)) }
func (p ReplayPolicy) MarshalJSON() ([]byte, error) {
	return marshalPolicy(replayPolicyNames, uint8(p))
}
func (p *ReplayPolicy) UnmarshalJSON(b []byte) error {
	return unmarshalPolicy(replayPolicyNames, b, (*uint8)(p))
}

func policyName(names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown(" + strconv.Itoa(int(v)) + ")"
}

func marshalPolicy(names []string, v uint8) ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("jetstream: unknown policy %d", v)
	}
	return strconv.AppendQuote(nil, names[v]), nil
}

func unmarshalPolicy(names []string, b []byte, v *uint8) error {
	for i, n := range names {
		if len(b) == len(n)+2 && b[0] == '"' && string(b[1:len(b)-1]) == n {
			*v = uint8(i)
			return nil
		}
	}
	return fmt.Errorf("can not unmarshal %q", b)
}
