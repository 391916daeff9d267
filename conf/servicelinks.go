package conf

import (
	"regexp"
	"strings"
)

// Kubernetes gives every pod, for each Service in its namespace, docker
// link style variables named after the service: a Service called "bus"
// sets BUS_SERVICE_HOST, BUS_SERVICE_PORT[_<NAME>], BUS_PORT=tcp://…,
// BUS_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR], and one called "bus-http"
// the same with BUS_HTTP_ in front (so BUS_HTTP_PORT=tcp://…, which is
// http_port's variable). They share bus's BUS_ prefix but are not
// settings: Load neither reads nor refuses them (IgnoredEnv lists them
// for a warning), and the flags of the keys they shadow still apply.
var serviceLinkName = regexp.MustCompile(`^BUS(_[A-Z0-9_]+)?_(SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?|PORT_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)$`)

// isServiceLink reports whether the environment variable name=val is one
// of those. A name ending in _PORT counts only when its value is a link
// URL: BUS_PORT=5222 is the port key, BUS_PORT=tcp://10.0.0.7:4222 is
// Kubernetes'.
func isServiceLink(name, val string) bool {
	if serviceLinkName.MatchString(name) {
		return true
	}
	return strings.HasPrefix(name, "BUS_") && strings.HasSuffix(name, "_PORT") &&
		(strings.HasPrefix(val, "tcp://") || strings.HasPrefix(val, "udp://") || strings.HasPrefix(val, "sctp://"))
}
