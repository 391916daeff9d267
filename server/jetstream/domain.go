package jetstream

import (
	"strings"
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
