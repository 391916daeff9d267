package jetstream

import (
	"bytes"
	"encoding/json"
	"strings"
)

// deadLetterAckPrefix is where a dead-letter stream's pub ack for a dead
// letter comes back: <prefix><stream>.<consumer>. A server-internal
// subject (a consumer may not dead-letter into $BUS.>).
const deadLetterAckPrefix = "$BUS.DLQ.ACK."

// deadLetterAck hears a dead-letter stream's answer to a dead letter and
// counts one it refused (full, discard new, too large…) as lost, for the
// consumer that gave up on the message. It runs on the goroutine that
// published the ack (the dead-letter stream's appender): it only counts
// and logs.
func (svc *Service) deadLetterAck(subject, _ []byte, hdr int, msg []byte) bool {
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	if !bytes.Contains(body, []byte(`"error"`)) {
		return true
	}
	var ack pubAck
	why := "the dead-letter stream refused it"
	if json.Unmarshal(body, &ack) == nil && ack.Error != nil {
		why += ": " + ack.Error.Description
	}
	streamName, consumerName, _ := strings.Cut(strings.TrimPrefix(string(subject), deadLetterAckPrefix), ".")
	if st := svc.stream(streamName); st != nil {
		if c := st.consumer(consumerName); c != nil {
			c.deadLetterLost(why)
			return true
		}
	}
	svc.sh.deadLettersLost.Add(1)
	svc.sh.log.Warn("dead letter lost", "stream", streamName, "consumer", consumerName, "reason", why)
	return true
}
