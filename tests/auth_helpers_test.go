package tests

import (
	"bufio"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// authPair is bus and the reference started with the same authorization.
type authPair struct {
	bus, ref string // client addresses
	// subs counts the client subscriptions of both servers.
	subs func() (bus, ref int)
}

// startAuthPair runs bus and the reference nats-server with auth, the
// latter configured by refOptions from the same block.
func startAuthPair(t *testing.T, auth server.Authorization) authPair {
	t.Helper()
	bus := startBus(t, server.Options{Authorization: auth})
	ns := startReferenceServer(t, refOptions(auth))
	return authPair{bus: bus.Addr().String(), ref: refAddr(ns), subs: func() (int, int) {
		return bus.Varz().Subscriptions, int(ns.NumSubscriptions())
	}}
}

// refOptions translates bus's authorization block into the reference's
// options, as its config parser would (default permissions applied to
// the users without their own).
func refOptions(a server.Authorization) *natsserver.Options {
	o := &natsserver.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Authorization: a.Token,
		Username:      a.User,
		Password:      a.Password,
		NoAuthUser:    a.NoAuthUser,
		AuthTimeout:   a.Timeout.Seconds(),
	}
	for _, u := range a.Users {
		p := u.Permissions
		if p == nil {
			p = a.DefaultPermissions
		}
		types := refConnTypes(u.AllowedConnectionTypes)
		if u.Nkey != "" {
			o.Nkeys = append(o.Nkeys, &natsserver.NkeyUser{Nkey: u.Nkey, Permissions: refPermissions(p), AllowedConnectionTypes: types})
			continue
		}
		o.Users = append(o.Users, &natsserver.User{Username: u.Name, Password: u.Password, Permissions: refPermissions(p), AllowedConnectionTypes: types})
	}
	return o
}

// refConnTypes is a user's allowed connection types as the reference
// keeps them (upper-cased, as its config parser leaves them); nil for none.
func refConnTypes(list []string) map[string]struct{} {
	if len(list) == 0 {
		return nil
	}
	m := map[string]struct{}{}
	for _, t := range list {
		m[strings.ToUpper(t)] = struct{}{}
	}
	return m
}

func refPermissions(p *server.Permissions) *natsserver.Permissions {
	if p == nil {
		return nil
	}
	rp := &natsserver.Permissions{}
	if p.Publish != nil {
		rp.Publish = &natsserver.SubjectPermission{Allow: p.Publish.Allow, Deny: p.Publish.Deny}
	}
	if p.Subscribe != nil {
		rp.Subscribe = &natsserver.SubjectPermission{Allow: p.Subscribe.Allow, Deny: p.Subscribe.Deny}
	}
	if p.Responses != nil {
		rp.Response = &natsserver.ResponsePermission{MaxMsgs: p.Responses.MaxMsgs, Expires: p.Responses.Expires}
	}
	return rp
}

// newNkeyUser returns a fresh user key pair's seed and public key.
func newNkeyUser(t *testing.T) (seed []byte, pub string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, err = kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	pub, err = kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return seed, pub
}

// readInfo dials addr and returns the connection, its reader and the
// decoded INFO.
func readInfo(t *testing.T, addr string) (net.Conn, *bufio.Reader, map[string]any) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	r := bufio.NewReader(nc)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "INFO ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	info := map[string]any{}
	if err := json.Unmarshal([]byte(strings.TrimSpace(line[5:])), &info); err != nil {
		t.Fatalf("INFO json: %v", err)
	}
	return nc, r, info
}

// readUntilClosed returns everything the server sends until it closes,
// "<open>" appended if it is still open after wait.
func readUntilClosed(nc net.Conn, r *bufio.Reader, wait time.Duration) string {
	_ = nc.SetReadDeadline(time.Now().Add(wait))
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return stripInfo(sb.String()) + "<open>"
			}
			return stripInfo(sb.String()) + "<closed>"
		}
	}
}
