package jetstream

import (
	"math"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// DefaultJszLimit is how many accounts /jsz details when no limit is
// asked for, as in the reference.
const DefaultJszLimit = 1024

// account is the one account bus keeps streams in, named as the
// reference names the account of a server without accounts.
const account = "$G"

// JszOptions are /jsz's query parameters. As in the reference, offset and
// limit page the accounts, Consumers implies Streams, and Streams without
// Account implies Accounts.
type JszOptions struct {
	Account   string // detail only this account ("$G")
	Accounts  bool   // detail the accounts
	Streams   bool   // with their streams
	Consumers bool   // and the streams' consumers
	Config    bool   // with each stream's and consumer's config
	Raft      bool   // count the streams and consumers this server leads (all)
	Offset    int
	Limit     int // 0: DefaultJszLimit; < 0: no limit
}

// Jsz is the /jsz document, shaped as the reference's: totals, then
// account_details → stream_detail → consumer_detail when asked for. The
// x_bus_* fields are bus's.
type Jsz struct {
	Usage
	ServerID        string           `json:"server_id"`
	Now             time.Time        `json:"now"`
	Disabled        bool             `json:"disabled,omitempty"`
	Config          JSConfig         `json:"config"`
	Limits          *JSLimits        `json:"limits,omitempty"` // configlimits.go
	Streams         int              `json:"streams"`
	StreamsLeader   int              `json:"streams_leader,omitempty"`
	Consumers       int              `json:"consumers"`
	ConsumersLeader int              `json:"consumers_leader,omitempty"`
	Messages        uint64           `json:"messages"`
	Bytes           uint64           `json:"bytes"`
	AccountDetails  []*AccountDetail `json:"account_details,omitempty"`
	Total           int              `json:"total"` // accounts with JetStream
	DeadLettered    int64            `json:"x_bus_dead_lettered"`
	// DeadLettersLost counts dead letters nothing stored (bus extension).
	DeadLettersLost int64 `json:"x_bus_dead_letters_lost"`
	// Damaged lists the streams found on disk that could not be opened
	// (bus extension).
	Damaged []DamagedStream `json:"x_bus_damaged_streams,omitempty"`
}

// Usage is JetStream's usage, as /jsz, /varz and each account report it.
type Usage struct {
	Memory          uint64   `json:"memory"`
	Storage         uint64   `json:"storage"`
	ReservedMemory  uint64   `json:"reserved_memory"`
	ReservedStorage uint64   `json:"reserved_storage"`
	Accounts        int      `json:"accounts"`
	HAAssets        int      `json:"ha_assets"`
	API             APIStats `json:"api"`
	// The store's in-memory indexes and open files, in /jsz and /varz
	// only (bus extension): now and their bounds.
	IndexMemory    int64 `json:"x_bus_index_memory,omitempty"`
	MaxIndexMemory int64 `json:"x_bus_max_index_memory,omitempty"`
	OpenFiles      int   `json:"x_bus_open_files,omitempty"`
	MaxOpenFiles   int   `json:"x_bus_max_open_files,omitempty"`
}

// APIStats counts API requests as /jsz writes them. Level is the API
// level bus serves (APILevel).
type APIStats struct {
	Level  int    `json:"level"`
	Total  uint64 `json:"total"`
	Errors uint64 `json:"errors"`
}

// JSConfig is JetStream's configuration. The server fills in the limits
// (the configured ones, or the reference's defaults; see
// server/sysinfo_linux.go) and the domain.
type JSConfig struct {
	MaxMemory  int64  `json:"max_memory"`
	MaxStorage int64  `json:"max_storage"`
	StoreDir   string `json:"store_dir,omitempty"`
	Domain     string `json:"domain,omitempty"`
}

// AccountDetail is one account in /jsz.
type AccountDetail struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Usage
	Streams []StreamDetail `json:"stream_detail,omitempty"`
}

// StreamDetail is one stream in /jsz: config only with config=true,
// consumers only with consumers=true.
type StreamDetail struct {
	Name      string            `json:"name"`
	Created   time.Time         `json:"created"`
	Cluster   *clusterInfo      `json:"cluster,omitempty"`
	Config    *streamConfig     `json:"config,omitempty"`
	State     streamState       `json:"state"`
	Consumers []*ConsumerDetail `json:"consumer_detail,omitempty"`
}

// ConsumerDetail is one consumer in /jsz: its info as CONSUMER.INFO
// answers it (NumPending is the lag), config only with config=true.
type ConsumerDetail struct {
	consumerInfo
	Config *consumerConfig `json:"config,omitempty"` // hides consumerInfo's
}

// Jsz snapshots JetStream for /jsz; serverID is the server's id.
func (svc *Service) Jsz(serverID string, o JszOptions) Jsz {
	if o.Limit == 0 {
		o.Limit = DefaultJszLimit
	}
	o.Streams = o.Streams || o.Consumers
	o.Accounts = o.Accounts || o.Streams && o.Account == ""
	out := Jsz{
		ServerID: serverID,
		Now:      svc.sh.now().UTC(),
		Config:   JSConfig{StoreDir: svc.dir},
		Limits:   svc.jszLimits(),
		Total:    1,

		DeadLettered:    svc.sh.deadLettered.Load(),
		DeadLettersLost: svc.sh.deadLettersLost.Load(),
		Damaged:         svc.Damaged(),
	}
	acc := &AccountDetail{Name: account, ID: account}
	streams := svc.sortedStreams()
	for _, st := range streams {
		info := st.info("")
		if info.Config.Storage == jetlog.StorageMemory {
			acc.Memory += info.State.Bytes
		} else {
			acc.Storage += info.State.Bytes
		}
		out.Streams++
		out.Consumers += info.State.ConsumerCount
		out.Messages += info.State.Msgs
		out.Bytes += info.State.Bytes
		if !o.Streams {
			continue
		}
		d := StreamDetail{Name: st.name, Created: info.Created, Cluster: info.Cluster, State: info.State}
		if o.Config {
			d.Config = &info.Config
		}
		if o.Consumers {
			for _, c := range st.sortedConsumers() {
				cd := &ConsumerDetail{consumerInfo: c.info("")}
				cd.Cluster = nil // as the reference leaves it out without a cluster
				if o.Config {
					cd.Config = &cd.consumerInfo.Config
				}
				d.Consumers = append(d.Consumers, cd)
			}
		}
		acc.Streams = append(acc.Streams, d)
	}
	if o.Raft { // one server leads everything
		out.StreamsLeader, out.ConsumersLeader = out.Streams, out.Consumers
	}
	api := APIStats{Level: APILevel, Total: uint64(svc.apiTotal.Load()), Errors: uint64(svc.apiErrors.Load())}
	out.Usage = Usage{Memory: acc.Memory, Storage: acc.Storage, Accounts: 1, API: api}
	idx := svc.sh.index.Stats()
	out.IndexMemory, out.MaxIndexMemory = idx.Bytes, idx.MaxBytes
	if svc.sh.files != nil {
		files := svc.sh.files.Stats()
		out.OpenFiles, out.MaxOpenFiles = files.Open, files.MaxOpen
	}
	// An account without limits reserves "all": -1 as the reference
	// writes it, unsigned.
	acc.ReservedMemory, acc.ReservedStorage, acc.API = math.MaxUint64, math.MaxUint64, api
	switch {
	case o.Account == account:
		out.AccountDetails = []*AccountDetail{acc}
	case o.Accounts:
		all := []*AccountDetail{acc}
		if o.Limit > 0 {
			lo := min(max(o.Offset, 0), len(all))
			all = all[lo:]
			all = all[:min(o.Limit, len(all))]
		}
		if len(all) > 0 {
			out.AccountDetails = all
		}
	}
	return out
}

// Varz is the JetStream section of /varz; the zero value (JetStream off)
// is written as {}, as the reference writes it.
type Varz struct {
	Config *JSConfig `json:"config,omitempty"`
	Stats  *Usage    `json:"stats,omitempty"`
	Limits *JSLimits `json:"limits,omitempty"`
}

// Varz summarises the service for /varz.
func (svc *Service) Varz(serverID string) Varz {
	j := svc.Jsz(serverID, JszOptions{})
	return Varz{Config: &j.Config, Stats: &j.Usage, Limits: j.Limits}
}
