package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Jsz is the /jsz document: JetStream totals and, per stream, its state
// and each consumer's lag, with the reference's field names where it has
// them.
type Jsz struct {
	ServerID     string     `json:"server_id"`
	Now          time.Time  `json:"now"`
	Config       JSConfig   `json:"config"`
	Memory       uint64     `json:"memory"`
	Storage      uint64     `json:"storage"`
	Streams      int        `json:"streams"`
	Consumers    int        `json:"consumers"`
	Messages     uint64     `json:"messages"`
	Bytes        uint64     `json:"bytes"`
	API          JSAPIStats `json:"api"`
	DeadLettered int64      `json:"x_bus_dead_lettered"`
	// DeadLettersLost counts dead letters nothing stored (bus extension).
	DeadLettersLost int64          `json:"x_bus_dead_letters_lost"`
	StreamDetail    []StreamDetail `json:"stream_detail"`
	// Damaged lists the streams found on disk that could not be opened
	// (bus extension).
	Damaged []DamagedStream `json:"x_bus_damaged_streams,omitempty"`
}

// JSConfig is where JetStream keeps its data.
type JSConfig struct {
	StoreDir string `json:"store_dir"`
}

// JSAPIStats counts API requests.
type JSAPIStats struct {
	Total  int64 `json:"total"`
	Errors int64 `json:"errors"`
}

// StreamDetail is one stream in /jsz.
type StreamDetail struct {
	Name      string           `json:"name"`
	Created   time.Time        `json:"created"`
	Subjects  []string         `json:"subjects"`
	Storage   string           `json:"storage"`
	Retention string           `json:"retention"`
	State     StreamStateJSON  `json:"state"`
	Consumers []ConsumerDetail `json:"consumer_detail"`
}

// StreamStateJSON is a stream's totals in /jsz.
type StreamStateJSON struct {
	Messages  uint64 `json:"messages"`
	Bytes     uint64 `json:"bytes"`
	FirstSeq  uint64 `json:"first_seq"`
	LastSeq   uint64 `json:"last_seq"`
	Deleted   uint64 `json:"num_deleted"`
	Consumers int    `json:"consumer_count"`
}

// ConsumerDetail is one consumer in /jsz; NumPending is its lag.
type ConsumerDetail struct {
	Name           string `json:"name"`
	NumPending     uint64 `json:"num_pending"`
	NumAckPending  int    `json:"num_ack_pending"`
	NumRedelivered int    `json:"num_redelivered"`
	NumWaiting     int    `json:"num_waiting"`
	DeliveredSeq   uint64 `json:"delivered_stream_seq"`
	AckFloorSeq    uint64 `json:"ack_floor_stream_seq"`
	DeadLettered   int64  `json:"x_bus_dead_lettered"`
	DeadLost       int64  `json:"x_bus_dead_letters_lost"`
}

// Jsz snapshots the streams and consumers for /jsz; serverID is the
// server's id.
func (svc *Service) Jsz(serverID string) Jsz {
	out := Jsz{
		ServerID:     serverID,
		Now:          svc.sh.now().UTC(),
		Config:       JSConfig{StoreDir: svc.dir},
		API:          JSAPIStats{Total: svc.apiTotal.Load(), Errors: svc.apiErrors.Load()},
		DeadLettered: svc.sh.deadLettered.Load(),

		DeadLettersLost: svc.sh.deadLettersLost.Load(),
		StreamDetail:    []StreamDetail{},
		Damaged:         svc.Damaged(),
	}
	for _, st := range svc.sortedStreams() {
		cfg := st.config()
		state := st.log.State()
		d := StreamDetail{
			Name: st.name, Created: st.created, Subjects: cfg.Subjects, Storage: string(cfg.Storage), Retention: string(cfg.Retention),
			State: StreamStateJSON{
				Messages: state.Msgs, Bytes: state.Bytes, FirstSeq: state.FirstSeq, LastSeq: state.LastSeq, Deleted: state.NumDeleted,
			},
			Consumers: []ConsumerDetail{},
		}
		for _, c := range st.sortedConsumers() {
			ci := c.info("")
			d.Consumers = append(d.Consumers, ConsumerDetail{
				Name: c.name, NumPending: ci.NumPending, NumAckPending: ci.NumAckPending,
				NumRedelivered: ci.NumRedelivered, NumWaiting: ci.NumWaiting,
				DeliveredSeq: ci.Delivered.Stream, AckFloorSeq: ci.AckFloor.Stream, DeadLettered: ci.DeadLettered,
				DeadLost: ci.DeadLettersLost,
			})
		}
		d.State.Consumers = len(d.Consumers)
		if cfg.Storage == jetlog.StorageMemory {
			out.Memory += state.Bytes
		} else {
			out.Storage += state.Bytes
		}
		out.Streams++
		out.Consumers += len(d.Consumers)
		out.Messages += state.Msgs
		out.Bytes += state.Bytes
		out.StreamDetail = append(out.StreamDetail, d)
	}
	return out
}

// Varz is the JetStream section of /varz.
type Varz struct {
	Config JSConfig  `json:"config"`
	Stats  VarzStats `json:"stats"`
}

// VarzStats are the totals in Varz.
type VarzStats struct {
	Memory    uint64     `json:"memory"`
	Storage   uint64     `json:"storage"`
	Streams   int        `json:"streams"`
	Consumers int        `json:"consumers"`
	API       JSAPIStats `json:"api"`
}

// Varz summarises the service for /varz.
func (svc *Service) Varz(serverID string) Varz {
	j := svc.Jsz(serverID)
	return Varz{Config: j.Config, Stats: VarzStats{
		Memory: j.Memory, Storage: j.Storage, Streams: j.Streams, Consumers: j.Consumers, API: j.API,
	}}
}
