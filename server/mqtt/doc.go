// Package mqtt holds the parts of bus's MQTT listener that need nothing
// of the server: the packet codec of MQTT 3.1.1 (header.go, reader.go,
// decode.go, encode.go) and MQTT 5 (props.go, propsencode.go, reason.go,
// decode5.go, encode5.go: the property blocks, reason codes and the
// packets that differ) and the mapping between MQTT topics and NATS
// subjects (topic.go). The listener glue that authenticates, routes and
// stores lives in package server (server/mqtt*.go) and calls in here.
//
// The codec is bus's own rather than a library's: docs/mqtt.md says why.
// It decodes in place: every []byte a decoded packet holds aliases the
// bytes it was decoded from, so decoding a PUBLISH allocates nothing, and
// the Reader never allocates more than the maximum packet size it was
// given however long a length a peer announces.
//
// Nothing here starts a goroutine or holds a lock; a Reader belongs to the
// one goroutine that reads its connection.
package mqtt
