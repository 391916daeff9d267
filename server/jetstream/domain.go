package jetstream

import (
	"strings"

	"github.com/bus-dev/bus/subjects"
)

// A JetStream domain (Options.Domain), as nats-server's `jetstream {
// domain }`: the API answers on $JS.<domain>.API.> as well as $JS.API.>,
// and publish acks and account info name the domain, which clients use
// to reach this server's JetStream from elsewhere (a leaf node, later).

// ValidDomain reports whether name may be a domain: a subject token (no
// ".", "*", ">" or white space), as the reference requires.
func ValidDomain(name string) bool {
	return name != "" && !strings.ContainsAny(name, ".*> \t\r\n")
}

// domainPrefix is where the domain's API requests arrive.
func (svc *Service) domainPrefix() string { return "$JS." + svc.sh.domain + ".API." }

// captureDomainRequest takes a request on $JS.<domain>.API.> as the same
// request on $JS.API.>; a pull goes straight to its consumer.
func (svc *Service) captureDomainRequest(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	op, ok := strings.CutPrefix(string(subject), svc.domainPrefix())
	if !ok {
		return false
	}
	if strings.HasPrefix(op, "$KV.") || strings.HasPrefix(op, "$OBJ.") {
		return svc.captureDomainPublish(from, op, reply, hdr, msg)
	}
	local := apiPrefix + op
	if next, ok := strings.CutPrefix(op, "CONSUMER.MSG.NEXT."); ok {
		streamName, consumerName, _ := strings.Cut(next, ".")
		st := svc.stream(streamName)
		if st == nil {
			return false
		}
		c := st.consumer(consumerName)
		if c == nil {
			return false
		}
		return c.capturePull(from, []byte(local), reply, hdr, msg)
	}
	return svc.captureRequest(from, []byte(local), reply, hdr, msg)
}

// captureDomainPublish takes a publish on $JS.<domain>.API.$KV.> (or
// $OBJ.>) as the same publish on $KV.> ($OBJ.>): nats.go puts a bucket's
// key there when it reaches the bucket through a domain, and the
// reference's domain mapping table maps it back. It goes straight to the
// stream that captures the subject, with the publisher's Rights; the
// publisher must also be allowed the subject it maps to, so that the
// domain is no way around a deny on $KV.> (bus is stricter here: the
// reference checks only the subject published). With no stream to take
// it, it is declined: the publisher gets no responders, as there.
func (svc *Service) captureDomainPublish(from Rights, subject string, reply []byte, hdr int, msg []byte) bool {
	if !subjects.ValidLiteral(subject) {
		return false
	}
	st := svc.capturing(subject)
	if st == nil {
		return false
	}
	if from != nil && !from.MayPublish(subject) {
		st.ackError(string(reply), errMayNotPublish(from, subject))
		return true
	}
	return st.captureMsg(from, []byte(subject), reply, hdr, msg)
}

// capturing is the stream whose subjects take subject, if any (streams'
// subjects do not overlap, so there is at most one).
func (svc *Service) capturing(subject string) *stream {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	for _, st := range svc.streams {
		for _, s := range st.config().Subjects {
			if subjects.Matches(s, subject) {
				return st
			}
		}
	}
	return nil
}
