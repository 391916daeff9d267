package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// The record of a retained message in $MQTT_rmsgs, in the reference's
// format so that either server reads the other's store: the subject is
// "$MQTT.rmsgs." and the message's subject (one record per subject, the
// stream keeps the last), the payload is the message's, and headers say
// the rest:
//
//	NATS/1.0\r\n
//	Nmqtt-RTopic:<MQTT topic>\r\n
//	Nmqtt-RFlags:<PUBLISH flags, hex; "-" first for a clearing record>\r\n
//	Nmqtt-ROrigin:<server id>\r\n
//	Nmqtt-RSource:<user name, if any>\r\n
//	\r\n
//
// An empty payload clears the topic: the clearing record replaces the
// last one and is then deleted itself. Records of nats-server before
// 2.10.10 have no headers and a JSON payload (mqttRetainedJSON).

// The record's constants, part of the stored format.
const (
	mqttRetainedStream  = "$MQTT_rmsgs"
	mqttRetainedPrefix  = "$MQTT.rmsgs."
	mqttRetainedTopic   = "Nmqtt-RTopic"
	mqttRetainedFlags   = "Nmqtt-RFlags"
	mqttRetainedOrigin  = "Nmqtt-ROrigin"
	mqttRetainedSource  = "Nmqtt-RSource"
	mqttRetainedCleared = '-'
)

// mqttRetainedRecord is a retained message as stored.
type mqttRetainedRecord struct {
	topic, origin, source string
	flags                 byte // the PUBLISH's flags: QoS << 1 | retain
	payload               []byte
}

// header is the record's header block.
func (r *mqttRetainedRecord) header() []byte {
	b := make([]byte, 0, 64+len(r.topic)+len(r.origin)+len(r.source))
	b = append(b, "NATS/1.0\r\n"...)
	b = append(append(append(b, mqttRetainedTopic+":"...), r.topic...), "\r\n"...)
	b = append(b, mqttRetainedFlags+":"...)
	if len(r.payload) == 0 {
		b = append(b, mqttRetainedCleared)
	}
	b = append(strconv.AppendUint(b, uint64(r.flags), 16), "\r\n"...)
	if r.origin != "" {
		b = append(append(append(b, mqttRetainedOrigin+":"...), r.origin...), "\r\n"...)
	}
	if r.source != "" {
		b = append(append(append(b, mqttRetainedSource+":"...), r.source...), "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// errMQTTBadRetained is a record in $MQTT_rmsgs that is not a retained
// message (written there by someone else): it is skipped.
var errMQTTBadRetained = errors.New("mqtt: not a retained message record")

// mqttRetainedJSON is the payload of a record written by nats-server
// before 2.10.10, which had no headers.
type mqttRetainedJSON struct {
	Origin  string `json:"origin,omitempty"`
	Subject string `json:"subject,omitempty"`
	Topic   string `json:"topic,omitempty"`
	Msg     []byte `json:"msg,omitempty"`
	Flags   byte   `json:"flags,omitempty"`
	Source  string `json:"source,omitempty"`
}

// decodeRetained reads a stored record's header block and payload. The
// record keeps payload (the caller's).
func decodeRetained(hdr, payload []byte) (mqttRetainedRecord, error) {
	flags, ok := headerValue(hdr, mqttRetainedFlags)
	if !ok {
		var j mqttRetainedJSON
		if err := json.Unmarshal(payload, &j); err != nil || j.Flags > 0x0f || j.Flags>>1&3 == 3 {
			return mqttRetainedRecord{}, errMQTTBadRetained
		}
		return mqttRetainedRecord{topic: j.Topic, origin: j.Origin, source: j.Source, flags: j.Flags, payload: j.Msg}, nil
	}
	if len(flags) > 1 && flags[0] == mqttRetainedCleared {
		flags = flags[1:]
	}
	f, err := strconv.ParseUint(string(flags), 16, 8)
	if err != nil || f > 0x0f || f>>1&3 == 3 {
		return mqttRetainedRecord{}, errMQTTBadRetained
	}
	r := mqttRetainedRecord{flags: byte(f), payload: payload}
	if v, ok := headerValue(hdr, mqttRetainedTopic); ok {
		r.topic = string(v)
	}
	if v, ok := headerValue(hdr, mqttRetainedOrigin); ok {
		r.origin = string(v)
	}
	if v, ok := headerValue(hdr, mqttRetainedSource); ok {
		r.source = string(v)
	}
	return r, nil
}

// headerValue is the value of the first header key in a NATS header
// block, trimmed of spaces.
func headerValue(hdr []byte, key string) ([]byte, bool) {
	for line := range bytes.SplitSeq(hdr, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == key {
			return bytes.TrimSpace(v), true
		}
	}
	return nil, false
}
