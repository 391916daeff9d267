package jetstream

import "cmp"

// The two forms of a consumer's ack and flow-control subjects, as
// nats-server 2.15 has them:
//
//	v1  $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
//	    $JS.FC.<stream>.<consumer>.<id>
//	v2  $JS.ACK.<domain>.<account hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>[.…]
//	    $JS.FC.<domain>.<account hash>.<stream>.<consumer>.<id>
//
// where <domain> is the JetStream domain or "_" and <account hash> the
// reference's 8-character hash of the account's name ("$G" here). A
// consumer takes acks and flow-control answers in both forms always; its
// deliveries and requests carry v2 only when Options.AckFormatV2 is set
// (the reference's feature flag js_ack_fc_v2, announced as its future
// default), v1 otherwise. Clients (nats.go's jetstream package) read a
// delivery's metadata from either form, as bus's external sourcing does
// (parseAckReply).

// globalAccount names the account a Service with no Options.AccountName
// serves, in v2 ack subjects.
const globalAccount = "$G"

// ackSubjects are one consumer's subject prefixes: the ones its
// deliveries and flow-control requests carry, and the subscriptions that
// take acks and answers in both forms.
type ackSubjects struct {
	ackBase, fcBase string // "$JS.ACK.….<consumer>.", "$JS.FC.….<consumer>."
	ackSubs, fcSubs []string
}

func newAckSubjects(domain, account, stream, consumer string, v2 bool) ackSubjects {
	if domain == "" {
		domain = "_"
	}
	v1Tail := stream + "." + consumer + "."
	v2Tail := domain + "." + tokenHash(cmp.Or(account, globalAccount)) + "." + v1Tail
	a := ackSubjects{
		ackBase: "$JS.ACK." + v1Tail, fcBase: "$JS.FC." + v1Tail,
		ackSubs: []string{"$JS.ACK." + v1Tail + ">", "$JS.ACK." + v2Tail + ">"},
		fcSubs:  []string{"$JS.FC." + v1Tail + ">", "$JS.FC." + v2Tail + ">"},
	}
	if v2 {
		a.ackBase, a.fcBase = "$JS.ACK."+v2Tail, "$JS.FC."+v2Tail
	}
	return a
}
