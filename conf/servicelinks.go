package conf

import (
	"regexp"
	"strings"
)

// Kubernetes gives every pod, for each Service in its namespace, docker
// link style variables named after the service: a Service called "bus"
// sets BUS_SERVICE_HOST, BUS_SERVICE_PORT[_<NAME>], BUS_PORT=tcp://…,
// BUS_PORT_<port>_<PROTO>[_PROTO|_PORT|_ADDR]. They share bus's BUS_
// prefix but are not settings: Load ignores them (IgnoredEnv lists them
// for a warning) instead of refusing to start.
var serviceLinkName = regexp.MustCompile(`^BUS_(SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?|PORT_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)$`)

// isServiceLink reports whether the environment variable name=val is one
// of those (BUS_PORT counts when its value is a link URL, not a number).
func isServiceLink(name, val string) bool {
	if name == "BUS_PORT" {
		return strings.HasPrefix(val, "tcp://") || strings.HasPrefix(val, "udp://") || strings.HasPrefix(val, "sctp://")
	}
	return serviceLinkName.MatchString(name)
}
