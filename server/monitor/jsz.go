package monitor

// JszOptions are /jsz's query parameters, which the server hands to
// JetStream as they are (jetstream.JszOptions has the same fields).
type JszOptions struct {
	Account   string // detail only this account ("$G")
	Accounts  bool   // detail the accounts
	Streams   bool   // with their streams
	Consumers bool   // and the streams' consumers
	Config    bool   // with each stream's and consumer's config
	Raft      bool   // count the streams and consumers this server leads (all)
	Offset    int
	Limit     int // 0: JetStream's default; < 0: no limit
}
