package server

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Account events: as the reference, every client that authenticates is
// announced on $SYS.ACCOUNT.<account>.CONNECT and its close on
// .DISCONNECT, in the system account's subject space only, and only
// when the system account has users to hear them. A client refused
// authentication (by the configuration, a JWT or the auth callout) is
// announced on $SYS.SERVER.<server id>.CLIENT.AUTH.ERR.

const (
	connectEventType    = "io.nats.server.advisory.v1.client_connect"
	disconnectEventType = "io.nats.server.advisory.v1.client_disconnect"
)

// typedEvent heads every event, as the reference's TypedEvent.
type typedEvent struct {
	Type string    `json:"type"`
	ID   string    `json:"id"`
	Time time.Time `json:"timestamp"`
}

// clientEventInfo is who an event is about (the reference's ClientInfo,
// the fields bus has).
type clientEventInfo struct {
	Start      *time.Time    `json:"start,omitempty"`
	Host       string        `json:"host,omitempty"`
	ID         uint64        `json:"id,omitempty"`
	Account    string        `json:"acc,omitempty"`
	User       string        `json:"user,omitempty"`
	Name       string        `json:"name,omitempty"`
	Lang       string        `json:"lang,omitempty"`
	Version    string        `json:"ver,omitempty"`
	RTT        time.Duration `json:"rtt,omitempty"`
	Server     string        `json:"server,omitempty"` // a latency metric's responder's
	Stop       *time.Time    `json:"stop,omitempty"`
	Kind       string        `json:"kind,omitempty"`
	ClientType string        `json:"client_type,omitempty"`
}

type connectEvent struct {
	typedEvent
	Server *sysServerInfo  `json:"server"`
	Client clientEventInfo `json:"client"`
}

// disconnectEvent is sent as a connection closes. As in the reference,
// sent counts what the client sent (its publishes) and received what
// it was sent.
type disconnectEvent struct {
	typedEvent
	Server   *sysServerInfo  `json:"server"`
	Client   clientEventInfo `json:"client"`
	Sent     DataStats       `json:"sent"`
	Received DataStats       `json:"received"`
	Reason   string          `json:"reason"`
}

// accountEventsOn reports whether account events are published: only
// with a system account that has users.
func (s *Server) accountEventsOn() bool { return s.opts.hasSystemUsers() }

// eventID is a fresh event id (the reference's are random too).
func eventID() string {
	var b [11]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// eventAccount is the account name events carry ($G for the global).
func eventAccount(name string) string {
	if name == "" {
		return globalAccount
	}
	return name
}

// clientEvent describes c from what /connz shows of it.
func clientEvent(ci *ConnInfo, account, user string) clientEventInfo {
	start := ci.Start
	return clientEventInfo{
		Start: &start, Host: ci.IP, ID: ci.Cid, Account: account, User: user,
		Name: ci.Name, Lang: ci.Lang, Version: ci.Version, Kind: ci.Kind, ClientType: ci.Type,
	}
}

// announceConnect publishes c's CONNECT event, once, as its first
// CONNECT is accepted.
func (c *conn) announceConnect() {
	s := c.srv
	if !s.accountEventsOn() || c.announced.Swap(true) {
		return
	}
	c.mu.Lock()
	d, account := c.desc, eventAccount(c.accountName())
	c.mu.Unlock()
	ci := c.connInfo(time.Now(), 0, d, 0)
	s.sysPublish(sysAccountEventPrefix+account+".CONNECT", connectEvent{
		typedEvent: typedEvent{Type: connectEventType, ID: eventID(), Time: time.Now().UTC()},
		Server:     s.envelope(),
		Client:     clientEvent(&ci, account, d.user),
	})
}

// announceDisconnect publishes the DISCONNECT event of a closed
// connection that was announced; cc is what /connz keeps of it.
func (c *conn) announceDisconnect(cc *closedConn) {
	if !c.announced.Load() {
		return
	}
	ev := c.srv.disconnectEventOf(cc)
	c.srv.sysPublish(sysAccountEventPrefix+ev.Client.Account+".DISCONNECT", ev)
}

// announceAuthError publishes the advisory of a connection closed
// because it failed to authenticate; cc is what /connz keeps of it. As
// the reference, it is a disconnect event, on the server's subject.
func (c *conn) announceAuthError(cc *closedConn) {
	s := c.srv
	if !s.accountEventsOn() {
		return
	}
	s.sysPublish("$SYS.SERVER."+s.id+".CLIENT.AUTH.ERR", s.disconnectEventOf(cc))
}

// disconnectEventOf is the disconnect event of the closed connection cc.
func (s *Server) disconnectEventOf(cc *closedConn) disconnectEvent {
	ci := &cc.info
	account := eventAccount(ci.Account)
	ev := clientEvent(ci, account, cc.user)
	ev.RTT, ev.Stop = ci.RoundTrip, ci.Stop
	return disconnectEvent{
		typedEvent: typedEvent{Type: disconnectEventType, ID: eventID(), Time: ci.Stop.UTC()},
		Server:     s.envelope(),
		Client:     ev,
		Sent:       DataStats{MsgBytes: MsgBytes{Msgs: ci.InMsgs, Bytes: ci.InBytes}},
		Received:   DataStats{MsgBytes: MsgBytes{Msgs: ci.OutMsgs, Bytes: ci.OutBytes}},
		Reason:     ci.Reason,
	}
}

// sysAccountEventPrefix heads the account events' subjects.
const sysAccountEventPrefix = "$SYS.ACCOUNT."

// sysPublish publishes v as JSON to subject in the system account.
func (s *Server) sysPublish(subject string, v any) {
	s.sysReply(s.sysSubs, []byte(subject), v)
}
