package jetstream

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// DefaultJszLimit is how many accounts /jsz details when no limit is
// asked for, as in the reference.
const DefaultJszLimit = 1024

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
func (svc *Service) Jsz(serverID string, o JszOptions) Jsz { return JszOf(serverID, o, svc) }

// JszOf snapshots the JetStream of several accounts for /jsz, one
// Service each: the document's config, limits, store and index figures
// are the first's (the global account's, whose limits are the
// server's); its counts are the sum of all, and account_details lists
// them by name, as the reference does across its accounts.
func JszOf(serverID string, o JszOptions, services ...*Service) Jsz {
	if o.Limit == 0 {
		o.Limit = DefaultJszLimit
	}
	o.Streams = o.Streams || o.Consumers
	o.Accounts = o.Accounts || o.Streams && o.Account == ""
	first := services[0]
	out := Jsz{
		ServerID: serverID,
		Now:      first.sh.now().UTC(),
		Config:   JSConfig{StoreDir: first.dir},
		Limits:   first.jszLimits(),
		Total:    len(services),
	}
	var api APIStats
	all := make([]*AccountDetail, 0, len(services))
	counted, countedFiles := map[*jetlog.IndexCache]bool{}, map[*jetlog.FileCache]bool{}
	for _, svc := range services {
		acc := svc.accountDetail(o, &out)
		api.Total += acc.API.Total
		api.Errors += acc.API.Errors
		out.Memory += acc.Memory
		out.Storage += acc.Storage
		out.DeadLettered += svc.sh.deadLettered.Load()
		out.DeadLettersLost += svc.sh.deadLettersLost.Load()
		out.Damaged = append(out.Damaged, svc.Damaged()...)
		if !counted[svc.sh.index] { // services sharing caches count them once
			counted[svc.sh.index] = true
			idx := svc.sh.index.Stats()
			out.IndexMemory += idx.Bytes
			out.MaxIndexMemory += idx.MaxBytes
		}
		if svc.sh.files != nil && !countedFiles[svc.sh.files] {
			countedFiles[svc.sh.files] = true
			files := svc.sh.files.Stats()
			out.OpenFiles += files.Open
			out.MaxOpenFiles += files.MaxOpen
		}
		all = append(all, acc)
	}
	if o.Raft { // one server leads everything
		out.StreamsLeader, out.ConsumersLeader = out.Streams, out.Consumers
	}
	api.Level = APILevel
	out.API, out.Accounts = api, len(services)
	slices.SortFunc(all, func(a, b *AccountDetail) int { return strings.Compare(a.Name, b.Name) })
	switch {
	case o.Account != "":
		for _, acc := range all {
			if acc.Name == o.Account {
				out.AccountDetails = []*AccountDetail{acc}
			}
		}
	case o.Accounts:
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

// accountName is the account svc serves, as /jsz names it.
func (svc *Service) accountName() string {
	if svc.sh.account == "" {
		return globalAccount
	}
	return svc.sh.account
}

// accountDetail is svc's account in /jsz, with its streams when o asks;
// it adds the account's streams, consumers, messages and bytes to out.
func (svc *Service) accountDetail(o JszOptions, out *Jsz) *AccountDetail {
	name := svc.accountName()
	acc := &AccountDetail{Name: name, ID: name}
	for _, st := range svc.sortedStreams() {
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
	acc.API = APIStats{Level: APILevel, Total: uint64(svc.apiTotal.Load()), Errors: uint64(svc.apiErrors.Load())}
	acc.ReservedMemory, acc.ReservedStorage = svc.Reserved()
	return acc
}

// Reserved is what svc's account reserves of memory and storage, as /jsz
// reports it: the account's own jetstream limits, or "all" (-1 as the
// reference writes it, unsigned) without them. The global account's
// limits are the server's, which reserve nothing for it.
func (svc *Service) Reserved() (memory, storage uint64) {
	memory, storage = math.MaxUint64, math.MaxUint64
	b := svc.sh.bound()
	if svc.sh.account != "" && b.maxMemory > 0 {
		memory = uint64(b.maxMemory)
	}
	if svc.sh.account != "" && b.maxStorage > 0 {
		storage = uint64(b.maxStorage)
	}
	return memory, storage
}

// Varz is the JetStream section of /varz; the zero value (JetStream off)
// is written as {}, as the reference writes it.
type Varz struct {
	Config *JSConfig `json:"config,omitempty"`
	Stats  *Usage    `json:"stats,omitempty"`
	Limits *JSLimits `json:"limits,omitempty"`
}

// Varz summarises the service for /varz.
func (svc *Service) Varz(serverID string) Varz { return VarzOf(serverID, svc) }

// VarzOf summarises several accounts' services for /varz, as JszOf
// does for /jsz: the first's config and limits, the usage of all.
func VarzOf(serverID string, services ...*Service) Varz {
	j := JszOf(serverID, JszOptions{}, services...)
	return Varz{Config: &j.Config, Stats: &j.Usage, Limits: j.Limits}
}
