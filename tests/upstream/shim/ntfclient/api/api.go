// Package api holds the types of nats.go's test tester that its tests read:
// the servers of an instance and the TLS material minted for it. The field
// names and JSON tags are the tester's, so a test written against the real
// tester reads the same values here.
package api

// TLSMode selects how generated TLS checks clients.
type TLSMode string

const (
	// TLSModeServer is one-way TLS: the server shows its certificate and
	// asks for none.
	TLSModeServer TLSMode = "server"
	// TLSModeMutual also requires the issued client certificate.
	TLSModeMutual TLSMode = "mutual"
)

// TLSOptions asks for generated TLS on an instance's client port.
type TLSOptions struct {
	Mode           TLSMode  `json:"mode,omitempty"`
	SANs           []string `json:"sans,omitempty"`
	HandshakeFirst bool     `json:"handshake_first,omitempty"`
	Timeout        float64  `json:"timeout,omitempty"` // seconds; 0 is the 2 s default
}

// TLSMaterial is what a client needs to dial a generated-TLS instance.
// The client certificate is set for TLSModeMutual only.
type TLSMaterial struct {
	CAPEM         string `json:"ca_pem"`
	ClientCertPEM string `json:"client_cert_pem,omitempty"`
	ClientKeyPEM  string `json:"client_key_pem,omitempty"`
}

// ManagedServer is one bus process of an instance.
type ManagedServer struct {
	Name    string         `json:"name"`
	Cluster string         `json:"cluster"`
	Port    int            `json:"port"`
	Ports   map[string]int `json:"ports,omitempty"` // websocket, mqtt, leafnode when asked for
	URL     string         `json:"url,omitempty"`
	Running bool           `json:"running"`
}

// DestroyResponse answers Instance.Destroy.
type DestroyResponse struct {
	Destroyed bool `json:"destroyed"`
}

// StopServerResponse answers Instance.StopServer.
type StopServerResponse struct {
	Shutdown bool `json:"shutdown"`
}

// StartServerResponse answers Instance.StartServer.
type StartServerResponse struct {
	Started bool `json:"started"`
}

// UpdateServerResponse answers Instance.UpdateServer.
type UpdateServerResponse struct {
	Updated bool `json:"updated"`
}

// ReloadServerResponse answers Instance.ReloadServer.
type ReloadServerResponse struct {
	Reloaded bool `json:"reloaded"`
}
