package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"

	"github.com/nats-io/nkeys"
)

// leafInfo is what bus reads of a hub's INFO on a leaf link.
type leafInfo struct {
	ServerID     string   `json:"server_id"`
	Name         string   `json:"server_name"`
	CID          uint64   `json:"client_id"`
	Nonce        string   `json:"nonce"`
	TLSRequired  bool     `json:"tls_required"`
	Headers      bool     `json:"headers"`
	Domain       string   `json:"domain"`
	LeafNodeURLs []string `json:"leafnode_urls"`
	// WSConnectURLs are the hub cluster's WebSocket listeners, which a
	// link dialed over ws:// or wss:// learns in place of LeafNodeURLs.
	WSConnectURLs []string `json:"ws_connect_urls"`
	InfoOnConnect bool     `json:"info_on_connect"`
	// Import and Export are the leaf user's rights on the hub: what bus
	// may receive (subscribe to) and send (publish) across the link.
	Import *leafSubjectRights `json:"import"`
	Export *leafSubjectRights `json:"export"`
}

type leafSubjectRights struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// leafConnectInfo is the CONNECT bus sends on a link it dialed, with the
// reference's field names (LEAFNODE.md §4a).
// leafProto is the protocol version bus's leaf CONNECT claims:
// nats-server's MsgTraceProto (3), since bus traces what a hub sends it
// (msgtrace.go). A hub sends a trace-only message (Nats-Trace-Only) only
// to a leaf that claims it, and otherwise reports it could not.
const leafProto = 3

type leafConnectInfo struct {
	Version     string   `json:"version,omitempty"`
	Nkey        string   `json:"nkey,omitempty"`
	JWT         string   `json:"jwt,omitempty"`
	Sig         string   `json:"sig,omitempty"`
	User        string   `json:"user,omitempty"`
	Pass        string   `json:"pass,omitempty"`
	Token       string   `json:"auth_token,omitempty"`
	ID          string   `json:"server_id,omitempty"`
	Domain      string   `json:"domain,omitempty"`
	Name        string   `json:"name,omitempty"`
	Cluster     string   `json:"cluster,omitempty"`
	Headers     bool     `json:"headers,omitempty"`
	JetStream   bool     `json:"jetstream,omitempty"`
	DenyPub     []string `json:"deny_pub,omitempty"`
	Compression string   `json:"compress_mode,omitempty"`
	Account     string   `json:"remote_account,omitempty"`
	Proto       int      `json:"protocol,omitempty"`
}

// leafConnect renders the CONNECT line for remote r reached at u, whose
// hub sent nonce: the credentials file's JWT and the nonce signed by its
// seed, or an nkey's signature, and a user and password (or a token)
// from the URL.
func (s *Server) leafConnect(r *LeafRemote, u *url.URL, nonce string) (string, error) {
	ci := leafConnectInfo{
		Version: Version,
		ID:      s.id,
		Domain:  s.opts.JetStreamDomain,
		Name:    s.name,
		// A cluster of its own, named by the unique server id: the hub
		// sends a leaf nothing that came from its own cluster, and
		// passes the loop-detection subject only between different ones.
		Cluster:     s.id,
		Headers:     true,
		JetStream:   s.opts.JetStream,
		DenyPub:     r.DenyImports,
		Compression: "off",
		Account:     globalAccount,
		Proto:       leafProto,
	}
	var kp nkeys.KeyPair
	switch {
	case r.Credentials != "":
		contents, err := os.ReadFile(r.Credentials)
		if err != nil {
			return "", fmt.Errorf("credentials: %w", err)
		}
		jwt, err := nkeys.ParseDecoratedJWT(contents)
		if err != nil {
			return "", fmt.Errorf("credentials %s: %w", r.Credentials, err)
		}
		if kp, err = nkeys.ParseDecoratedNKey(contents); err != nil {
			return "", fmt.Errorf("credentials %s: %w", r.Credentials, err)
		}
		ci.JWT = jwt
	case r.Nkey != "":
		var err error
		if kp, err = nkeys.FromSeed([]byte(r.Nkey)); err != nil {
			return "", fmt.Errorf("nkey seed: %w", err)
		}
		if ci.Nkey, err = kp.PublicKey(); err != nil {
			return "", fmt.Errorf("nkey seed: %w", err)
		}
	}
	if kp != nil {
		defer kp.Wipe()
		sig, err := kp.Sign([]byte(nonce))
		if err != nil {
			return "", fmt.Errorf("signing the hub's nonce: %w", err)
		}
		ci.Sig = base64.RawURLEncoding.EncodeToString(sig)
	}
	if u.User != nil {
		ci.User = u.User.Username()
		if pass, ok := u.User.Password(); ok {
			ci.Pass = pass
		} else {
			ci.Token = ci.User // a lone name is a token, as in the reference
		}
	}
	js, err := json.Marshal(ci)
	if err != nil {
		return "", err
	}
	return "CONNECT " + string(js) + "\r\n", nil
}
