package jetstream

import (
	"strconv"

	"github.com/bus-dev/bus/header"
)

// API levels on streams and consumers, as the reference's
// jetstream_versioning: a stored config carries the level its features
// need (_nats.req.level), so that a server of a lower level knows it
// cannot serve it; create, update and info answers add, without storing
// them, the level and version of the server answering (_nats.level,
// _nats.ver). List answers show the stored config only, as the
// reference's.

// The metadata keys (a wire format).
const (
	metaRequiredLevel = "_nats.req.level"
	metaServerVersion = "_nats.ver"
	metaServerLevel   = "_nats.level"
)

// requiredLevel is the API level a stream config's features need.
func (c *streamConfig) requiredLevel() int {
	level := 0
	if c.AllowMsgTTL || c.SubjectDeleteMarkerTTL > 0 {
		level = 1
	}
	if c.AllowMsgCounter || c.AllowAtomic || c.AllowMsgSchedules || c.PersistMode == "async" {
		level = 2
	}
	if c.AllowBatched {
		level = 4
	}
	return level
}

// requiredLevel is the API level a consumer config's features need.
func (c *consumerConfig) requiredLevel() int {
	if c.PauseUntil != nil && !c.PauseUntil.IsZero() ||
		c.PriorityPolicy != "" && c.PriorityPolicy != "none" || c.PinnedTTL != 0 || len(c.PriorityGroups) > 0 {
		return 1
	}
	return 0
}

// withRequiredLevel returns metadata as it is stored: the server's own
// keys a client sent dropped, and _nats.req.level set to level.
func withRequiredLevel(metadata map[string]string, level int) map[string]string {
	if metadata == nil {
		metadata = map[string]string{}
	}
	delete(metadata, metaServerVersion)
	delete(metadata, metaServerLevel)
	metadata[metaRequiredLevel] = strconv.Itoa(level)
	return metadata
}

// levelOf returns metadata with the _nats.req.level of stored (or
// without one if stored has none), for comparing a request with what is
// stored regardless of the level, as the reference compares them.
func levelOf(metadata, stored map[string]string) map[string]string {
	out := make(map[string]string, len(metadata)+1)
	for k, v := range metadata {
		out[k] = v
	}
	delete(out, metaRequiredLevel)
	if v, ok := stored[metaRequiredLevel]; ok {
		out[metaRequiredLevel] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withServerLevel returns a copy of metadata with the answering server's
// version and level, for an answer.
func (sh *shared) withServerLevel(metadata map[string]string) map[string]string {
	out := make(map[string]string, len(metadata)+2)
	for k, v := range metadata {
		out[k] = v
	}
	out[metaServerVersion] = sh.version
	out[metaServerLevel] = strconv.Itoa(APILevel)
	return out
}

// levelTooHigh reports whether a request's Nats-Required-Api-Level asks
// for more than bus serves (or is not a number).
func levelTooHigh(hdr []byte) bool {
	v := header.Value(hdr, hdrRequiredAPI)
	if len(v) == 0 {
		return false
	}
	n, err := strconv.Atoi(string(v))
	return err != nil || n > APILevel
}

func errRequiredAPILevel() *apiError {
	return newAPIError(412, 10185, "JetStream minimum api level required")
}

// responseType names the type of the answer to an API request (its
// subject's tokens after $JS.API.), "" for a request the API does not
// know, which gets no answer.
func responseType(t []string) string {
	op := t[0]
	if len(t) > 1 {
		op += "." + t[1]
	}
	if len(t) > 2 && (t[1] == "MSG" || t[1] == "DURABLE") {
		op += "." + t[2]
	}
	switch op {
	case "INFO":
		return typeAccountInfo
	case "STREAM.CREATE":
		return typeStreamCreate
	case "STREAM.UPDATE":
		return typeStreamUpdate
	case "STREAM.INFO":
		return typeStreamInfo
	case "STREAM.DELETE":
		return typeStreamDelete
	case "STREAM.PURGE":
		return typeStreamPurge
	case "STREAM.LIST":
		return typeStreamList
	case "STREAM.NAMES":
		return typeStreamNames
	case "STREAM.SNAPSHOT":
		return typeStreamSnapshot
	case "STREAM.RESTORE":
		return typeStreamRestore
	case "STREAM.MSG.GET":
		return typeMsgGet
	case "STREAM.MSG.DELETE":
		return typeMsgDelete
	case "CONSUMER.CREATE", "CONSUMER.DURABLE.CREATE":
		return typeConsumerCreate
	case "CONSUMER.INFO":
		return typeConsumerInfo
	case "CONSUMER.DELETE":
		return typeConsumerDelete
	case "CONSUMER.LIST":
		return typeConsumerList
	case "CONSUMER.NAMES":
		return typeConsumerNames
	case "CONSUMER.PAUSE":
		return typeConsumerPause
	case "CONSUMER.UNPIN":
		return typeConsumerUnpin
	case "CONSUMER.RESET":
		return typeConsumerReset
	}
	return ""
}
