package monitor

import "time"

// SubszOptions are /subsz's query parameters.
// The JSON names are the reference's, for a $SYS.REQ request's body.
type SubszOptions struct {
	Subs    bool   `json:"subscriptions"`  // list the subscriptions
	Test    string `json:"test,omitempty"` // only those a message on this literal subject reaches
	Offset  int    `json:"offset"`
	Limit   int    `json:"limit"`             // <= 0: the server's default (1024)
	Account string `json:"account,omitempty"` // "$G" or nothing
}

// Subsz is the /subsz document: the subscription trie's counters and,
// with subs, the clients' subscriptions.
type Subsz struct {
	ServerID string    `json:"server_id"`
	Now      time.Time `json:"now"`
	SublistStats
	Total  int         `json:"total"`
	Offset int         `json:"offset"`
	Limit  int         `json:"limit"`
	Subs   []SubDetail `json:"subscriptions_list,omitempty"`
}

// SublistStats are the trie's counters with the reference's names.
// num_subscriptions counts the clients' subscriptions, as /varz does;
// the other counters include the server's own.
type SublistStats struct {
	NumSubs      uint32  `json:"num_subscriptions"`
	NumCache     uint32  `json:"num_cache"`
	NumInserts   uint64  `json:"num_inserts"`
	NumRemoves   uint64  `json:"num_removes"`
	NumMatches   uint64  `json:"num_matches"`
	CacheHitRate float64 `json:"cache_hit_rate"`
	MaxFanout    uint32  `json:"max_fanout"`
	AvgFanout    float64 `json:"avg_fanout"`
}
