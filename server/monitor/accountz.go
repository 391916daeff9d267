package monitor

import "time"

// bus has one account, "$G", and no routes or gateways: the documents
// of /accountz and /accstatz for that account, and of /routez and
// /gatewayz empty, in the reference's shapes (/leafz is leafz.go).

// Accountz is the /accountz document: the account names, or one
// account's detail with acc.
type Accountz struct {
	ServerID      string       `json:"server_id"`
	Now           time.Time    `json:"now"`
	SystemAccount string       `json:"system_account,omitempty"`
	Accounts      []string     `json:"accounts,omitempty"`
	Account       *AccountInfo `json:"account_detail,omitempty"`
}

// AccountInfo is one account in /accountz.
type AccountInfo struct {
	Name      string        `json:"account_name"`
	Updated   time.Time     `json:"update_time,omitempty"`
	Expired   bool          `json:"expired"`
	Complete  bool          `json:"complete"`
	JetStream bool          `json:"jetstream_enabled"`
	Leafs     int           `json:"leafnode_connections"`
	Clients   int           `json:"client_connections"`
	Subs      uint32        `json:"subscriptions"`
	NameTag   string        `json:"name_tag,omitempty"`
	Sublist   *SublistStats `json:"sublist_stats,omitempty"`
}

// AccountStatz is the /accstatz document.
type AccountStatz struct {
	ServerID string         `json:"server_id"`
	Now      time.Time      `json:"now"`
	Accounts []*AccountStat `json:"account_statz"`
}

// AccountStat is one account's traffic in /accstatz: sent is what its
// clients were sent, received what they published.
type AccountStat struct {
	Account       string    `json:"acc"`
	Name          string    `json:"name"`
	Conns         int       `json:"conns"`
	LeafNodes     int       `json:"leafnodes"`
	TotalConns    int       `json:"total_conns"`
	NumSubs       uint32    `json:"num_subscriptions"`
	Sent          DataStats `json:"sent"`
	Received      DataStats `json:"received"`
	SlowConsumers int64     `json:"slow_consumers"`
}

// DataStats counts messages, split by where they went (all to clients).
type DataStats struct {
	MsgBytes
	Gateways *MsgBytes `json:"gateways,omitempty"`
	Routes   *MsgBytes `json:"routes,omitempty"`
	Leafs    *MsgBytes `json:"leafs,omitempty"`
}

// MsgBytes is a message and byte count.
type MsgBytes struct {
	Msgs  int64 `json:"msgs"`
	Bytes int64 `json:"bytes"`
}

// Routez is the /routez document: bus has no routes.
type Routez struct {
	ServerID   string     `json:"server_id"`
	ServerName string     `json:"server_name"`
	Now        time.Time  `json:"now"`
	NumRoutes  int        `json:"num_routes"`
	Routes     []struct{} `json:"routes"`
}

// Gatewayz is the /gatewayz document: bus has no gateways.
type Gatewayz struct {
	ServerID string              `json:"server_id"`
	Now      time.Time           `json:"now"`
	Outbound map[string]struct{} `json:"outbound_gateways"`
	Inbound  map[string]struct{} `json:"inbound_gateways"`
}
