package monitor

import "time"

// ConnState selects open or closed connections, or both, in /connz.
type ConnState int

// The states of /connz's state parameter (open, closed, all or any).
const (
	ConnOpen ConnState = iota
	ConnClosed
	ConnAll
)

// ConnzOptions are /connz's query parameters.
//
// The JSON names are the reference's, for the same options in the body
// of a $SYS.REQ.SERVER.…CONNZ request (the server's sysreq.go).
type ConnzOptions struct {
	Sort       string    `json:"sort"`                 // a sort key; "" sorts by cid
	Auth       bool      `json:"auth"`                 // show authorized_user
	Subs       bool      `json:"subscriptions"`        // show subscriptions_list
	SubsDetail bool      `json:"subscriptions_detail"` // show subscriptions_list_detail instead
	Offset     int       `json:"offset"`
	Limit      int       `json:"limit"` // <= 0: the server's default (1024)
	CID        uint64    `json:"cid"`   // only this connection (then the limit is 1)
	State      ConnState `json:"state"`
	User       string    `json:"user"` // only connections of this authorized user
	// MQTTClient selects the MQTT connection with this client id.
	MQTTClient string `json:"mqtt_client"`
	// Account selects one account's connections: "$G", the system
	// account's name, or "" for all.
	Account string `json:"acc"`
}

// Connz is the /connz document.
type Connz struct {
	ServerID string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumConns int         `json:"num_connections"`
	Total    int         `json:"total"`
	Offset   int         `json:"offset"`
	Limit    int         `json:"limit"`
	Conns    []*ConnInfo `json:"connections"`
}

// ConnInfo is one connection in /connz, open or closed.
type ConnInfo struct {
	Cid            uint64      `json:"cid"`
	Kind           string      `json:"kind,omitempty"`
	Type           string      `json:"type,omitempty"`
	IP             string      `json:"ip"`
	Port           int         `json:"port"`
	Start          time.Time   `json:"start"`
	LastActivity   time.Time   `json:"last_activity"`
	Stop           *time.Time  `json:"stop,omitempty"`
	Reason         string      `json:"reason,omitempty"`
	RTT            string      `json:"rtt,omitempty"`
	Uptime         string      `json:"uptime"`
	Idle           string      `json:"idle"`
	Pending        int         `json:"pending_bytes"`
	InMsgs         int64       `json:"in_msgs"`
	OutMsgs        int64       `json:"out_msgs"`
	InBytes        int64       `json:"in_bytes"`
	OutBytes       int64       `json:"out_bytes"`
	NumSubs        uint32      `json:"subscriptions"`
	Name           string      `json:"name,omitempty"`
	Lang           string      `json:"lang,omitempty"`
	Version        string      `json:"version,omitempty"`
	TLSVersion     string      `json:"tls_version,omitempty"`
	TLSCipher      string      `json:"tls_cipher_suite,omitempty"`
	AuthorizedUser string      `json:"authorized_user,omitempty"`
	Account        string      `json:"account,omitempty"`
	Subs           []string    `json:"subscriptions_list,omitempty"`
	SubsDetail     []SubDetail `json:"subscriptions_list_detail,omitempty"`
	NameTag        string      `json:"name_tag,omitempty"`
	JWT            string      `json:"jwt,omitempty"`         // the user JWT, but for a bearer token
	IssuerKey      string      `json:"issuer_key,omitempty"`  // who signed the user JWT, or the nkey user's account
	MQTTClient     string      `json:"mqtt_client,omitempty"` // an MQTT client's client id

	// RoundTrip is RTT unformatted, for sort=rtt; not in the document.
	RoundTrip time.Duration `json:"-"`
}

// SubDetail is one subscription in /connz and /subsz.
type SubDetail struct {
	Account    string `json:"account,omitempty"`
	AccountTag string `json:"account_tag,omitempty"`
	Subject    string `json:"subject"`
	Queue      string `json:"qgroup,omitempty"`
	Sid        string `json:"sid"`
	Msgs       int64  `json:"msgs"`
	Max        int64  `json:"max,omitempty"`
	Cid        uint64 `json:"cid"`
}
