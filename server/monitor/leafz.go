package monitor

import "time"

// Leafz is the /leafz document, in the reference's shape: the leaf links
// that are up, each a hub bus joined.
type Leafz struct {
	ServerID string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumLeafs int         `json:"leafnodes"`
	Leafs    []*LeafInfo `json:"leafs"`
}

// LeafInfo is one link: the hub's name and address, its traffic, and how
// many subjects of interest it announced (listed with subs=1).
type LeafInfo struct {
	ID          uint64   `json:"id"`
	Name        string   `json:"name"`
	IsSpoke     bool     `json:"is_spoke"`
	Account     string   `json:"account"`
	IP          string   `json:"ip"`
	Port        int      `json:"port"`
	RTT         string   `json:"rtt,omitempty"`
	InMsgs      int64    `json:"in_msgs"`
	OutMsgs     int64    `json:"out_msgs"`
	InBytes     int64    `json:"in_bytes"`
	OutBytes    int64    `json:"out_bytes"`
	NumSubs     uint32   `json:"subscriptions"`
	Subs        []string `json:"subscriptions_list,omitempty"`
	Compression string   `json:"compression,omitempty"`
}
