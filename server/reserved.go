package server

import "strconv"

// Subjects and names the reference keeps for itself; a client using them
// gets a permissions violation whatever its permissions, so bus refuses
// them the same way.
const (
	gatewayReplyPrefix    = "_GR_." // gateway-routed replies
	oldGatewayReplyPrefix = "$GR."
	raftPrefix            = "$NRG." // clustering traffic
	serviceReplyPrefix    = "_R_."  // service import replies
	jsAckPrefix           = "$JS.ACK."
	systemQueue           = "_sys_" // the reference's internal queue group
	// busInternalPrefix is bus's own: the pub acks of dead letters and
	// of redriven ones come back there, and a client that could publish
	// there could fake them (a fake redrive ack would delete a dead
	// letter that was never stored again).
	busInternalPrefix = "$BUS.DLQ."
)

// hasReservedPrefix reports whether s starts with prefix and has more
// after it, as the reference tests. Subjects starting with neither '_'
// nor '$' cost one comparison.
func hasReservedPrefix(s []byte, prefix string) bool {
	return len(s) > len(prefix) && string(s[:len(prefix)]) == prefix
}

// reservedPublish reports whether a client may not publish to subject.
// see BenchmarkParsePub
func reservedPublish(subject []byte) bool {
	if len(subject) == 0 || subject[0] != '_' && subject[0] != '$' {
		return false
	}
	return hasReservedPrefix(subject, gatewayReplyPrefix) || hasReservedPrefix(subject, oldGatewayReplyPrefix) ||
		hasReservedPrefix(subject, raftPrefix) || hasReservedPrefix(subject, busInternalPrefix)
}

// reservedReply reports whether a client may not ask for replies on
// reply.
func reservedReply(reply []byte) bool {
	if len(reply) == 0 || reply[0] != '_' && reply[0] != '$' {
		return false
	}
	// The reference refuses "_R_." itself, but not "$JS.ACK." or "_GR_.".
	service := len(reply) >= len(serviceReplyPrefix) && string(reply[:len(serviceReplyPrefix)]) == serviceReplyPrefix
	return service || hasReservedPrefix(reply, jsAckPrefix) ||
		hasReservedPrefix(reply, gatewayReplyPrefix) || hasReservedPrefix(reply, oldGatewayReplyPrefix) ||
		hasReservedPrefix(reply, busInternalPrefix)
}

// replyViolation tells the client, as the reference does, that it may
// not publish with that reply subject; the connection stays open.
func (c *conn) replyViolation(reply []byte) {
	c.queueControl("-ERR 'Permissions Violation for Publish with Reply of " + strconv.Quote(string(reply)) + "'\r\n")
	c.log.Warn("publish violation", "user", c.userName(), "reply", string(reply))
}
