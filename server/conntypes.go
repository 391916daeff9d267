package server

import (
	"fmt"
	"strings"
)

// Connection types, nats-server's names for the ways a client reaches
// the server, which a user's AllowedConnectionTypes lists. Part of the
// config format: never renamed.
const (
	ConnTypeStandard  = "STANDARD"    // the client port (TCP, TLS)
	ConnTypeWebSocket = "WEBSOCKET"   // the websocket listener
	ConnTypeLeafnode  = "LEAFNODE"    // a leaf node's link (bus accepts none)
	ConnTypeLeafWS    = "LEAFNODE_WS" // a leaf node's link over WebSocket (bus accepts none)
	ConnTypeMQTT      = "MQTT"        // MQTT clients (the mqtt listener)
	ConnTypeMQTTWS    = "MQTT_WS"     // MQTT over WebSocket (/mqtt on the websocket listener)
	ConnTypeInProcess = "IN_PROCESS"  // the reference's in-process clients (bus has none)
)

// connTypes are every name the reference accepts. A user limited to
// names bus serves no connection of (LEAFNODE, IN_PROCESS) connects through
// none of bus's listeners, as a client of the reference would not.
var connTypes = []string{ConnTypeStandard, ConnTypeWebSocket, ConnTypeLeafnode, ConnTypeLeafWS,
	ConnTypeMQTT, ConnTypeMQTTWS, ConnTypeInProcess}

// compileConnTypes is the set of allowed types, upper-cased as the
// reference reads them; nil (every type) for an empty list.
func compileConnTypes(list []string) (map[string]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	set := make(map[string]bool, len(list))
	var unknown []string
	for _, t := range list {
		up := strings.ToUpper(t)
		known := false
		for _, k := range connTypes {
			known = known || up == k
		}
		if !known {
			unknown = append(unknown, t)
			continue
		}
		set[up] = true
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("invalid connection types %q (known: %s)", unknown, strings.Join(connTypes, ", "))
	}
	return set, nil
}

// connType is the connection's type, by the reference's names.
func (c *conn) connType() string {
	if c.mqtt != nil && c.ws {
		return ConnTypeMQTTWS
	}
	if c.mqtt != nil {
		return ConnTypeMQTT
	}
	if c.ws {
		return ConnTypeWebSocket
	}
	return ConnTypeStandard
}

// allowsConnType says the identity may connect as a connection of type
// t: every type when its user lists none.
func (id *identity) allowsConnType(t string) bool {
	return id.connTypes == nil || id.connTypes[t]
}
