package monitor

// The state document's connection list: the open connections as /connz
// lists them, cut to what a row of the dashboard shows, so that an MQTT
// device is told from a NATS client by its type and known by its MQTT
// client id.

// dashMaxConns bounds the connections listed in the state (the lowest
// cids, the longest connected); the rest are counted. /connz pages
// through them all.
const dashMaxConns = 100

// dashConn is one open connection.
type dashConn struct {
	Cid  uint64 `json:"cid"`
	Type string `json:"type"` // /connz's: "nats", "websocket" or "mqtt" (over WebSocket too)
	// Name is the name a NATS client gave in its CONNECT; MQTTClient an
	// MQTT client's client id.
	Name          string `json:"name,omitempty"`
	MQTTClient    string `json:"mqtt_client,omitempty"`
	IP            string `json:"ip"`
	Port          int    `json:"port"`
	Start         int64  `json:"start"`
	Subscriptions uint32 `json:"subscriptions"`
	InMsgs        int64  `json:"in_msgs"`
	OutMsgs       int64  `json:"out_msgs"`
}

// dashConns lists the open connections, at most dashMaxConns, and how
// many more there are. A Source that cannot list them leaves the list
// empty: the rest of the state still serves.
func (m *Server) dashConns() ([]dashConn, int) {
	list := []dashConn{}
	cz, err := m.src.Connz(ConnzOptions{State: ConnOpen, Limit: dashMaxConns})
	if err != nil || cz == nil {
		return list, 0
	}
	for _, ci := range cz.Conns {
		list = append(list, dashConn{
			Cid: ci.Cid, Type: ci.Type, Name: ci.Name, MQTTClient: ci.MQTTClient,
			IP: ci.IP, Port: ci.Port, Start: unixMilli(ci.Start),
			Subscriptions: ci.NumSubs, InMsgs: ci.InMsgs, OutMsgs: ci.OutMsgs,
		})
	}
	return list, max(cz.Total-len(list), 0)
}
