package jetstream

import (
	"time"
)

// Response type strings: the nats CLI validates every API response
// against a schema whose "type" is a constant (JETSTREAM.md §1).
const (
	typeAccountInfo    = "io.nats.jetstream.api.v1.account_info_response"
	typeStreamCreate   = "io.nats.jetstream.api.v1.stream_create_response"
	typeStreamUpdate   = "io.nats.jetstream.api.v1.stream_update_response"
	typeStreamInfo     = "io.nats.jetstream.api.v1.stream_info_response"
	typeStreamDelete   = "io.nats.jetstream.api.v1.stream_delete_response"
	typeStreamPurge    = "io.nats.jetstream.api.v1.stream_purge_response"
	typeStreamList     = "io.nats.jetstream.api.v1.stream_list_response"
	typeStreamNames    = "io.nats.jetstream.api.v1.stream_names_response"
	typeMsgGet         = "io.nats.jetstream.api.v1.stream_msg_get_response"
	typeMsgDelete      = "io.nats.jetstream.api.v1.stream_msg_delete_response"
	typeConsumerCreate = "io.nats.jetstream.api.v1.consumer_create_response"
	typeConsumerInfo   = "io.nats.jetstream.api.v1.consumer_info_response"
	typeConsumerDelete = "io.nats.jetstream.api.v1.consumer_delete_response"
	typeConsumerList   = "io.nats.jetstream.api.v1.consumer_list_response"
	typeConsumerNames  = "io.nats.jetstream.api.v1.consumer_names_response"
)

// streamState is the "state" of a StreamInfo.
type streamState struct {
	Msgs          uint64            `json:"messages"`
	Bytes         uint64            `json:"bytes"`
	FirstSeq      uint64            `json:"first_seq"`
	FirstTime     time.Time         `json:"first_ts"`
	LastSeq       uint64            `json:"last_seq"`
	LastTime      time.Time         `json:"last_ts"`
	NumSubjects   int               `json:"num_subjects,omitempty"`
	Subjects      map[string]uint64 `json:"subjects,omitempty"`
	NumDeleted    int               `json:"num_deleted,omitempty"`
	Deleted       []uint64          `json:"deleted,omitempty"` // with deleted_details
	ConsumerCount int               `json:"consumer_count"`
}

// streamInfo is the body of stream create/update/info responses and of
// list items.
type streamInfo struct {
	Type      string        `json:"type,omitempty"`
	Config    streamConfig  `json:"config"`
	Created   time.Time     `json:"created"`
	State     streamState   `json:"state"`
	Domain    string        `json:"domain,omitempty"`
	Cluster   *clusterInfo  `json:"cluster,omitempty"`
	TS        time.Time     `json:"ts"`
	DidCreate bool          `json:"did_create,omitempty"`
	Mirror    *sourceInfo   `json:"mirror,omitempty"`
	Sources   []*sourceInfo `json:"sources,omitempty"`
	// Suspended says why the owner's rights no longer cover the stream's
	// republish or sources (bus extension; rightscheck.go).
	Suspended *apiError `json:"x_bus_suspended,omitempty"`
}

type clusterInfo struct {
	Leader string `json:"leader,omitempty"`
}

// storedMsg is a message in a STREAM.MSG.GET response.
type storedMsg struct {
	Subject string    `json:"subject"`
	Seq     uint64    `json:"seq"`
	Header  []byte    `json:"hdrs,omitempty"`
	Data    []byte    `json:"data,omitempty"`
	Time    time.Time `json:"time"`
}

// pubAck is the reply to a publish into a stream. The reference writes
// the duplicate flag with a space ("duplicate": true); JSON readers do
// not care.
type pubAck struct {
	Error     *apiError `json:"error,omitempty"`
	Stream    string    `json:"stream"`
	Seq       uint64    `json:"seq"`
	Duplicate bool      `json:"duplicate,omitempty"`
	Domain    string    `json:"domain,omitempty"`
}
