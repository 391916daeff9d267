package tests

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// TestJWTConnzCredentials checks /connz's jwt and issuer_key of JWT
// users against the reference: shown with auth=true for open
// connections, always for closed ones, the JWT left out for a bearer
// token, and issuer_key the account or the signing key that signed it.
func TestJWTConnzCredentials(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	sk, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	skPub, _ := sk.PublicKey()
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.SigningKeys.Add(skPub) })
	users := map[string]string{}
	users["plain"], _ = w.user("A", nil, nil)
	users["signing-key"], _ = w.user("A", sk, nil)
	users["bearer"], _ = w.user("A", nil, func(uc *jwt.UserClaims) { uc.BearerToken = true })
	names := map[string]string{w.accounts["A"].pub: "account A", skPub: "signing key"}
	for name, creds := range users {
		names[jwtOf(t, creds)] = "jwt of " + name
	}
	opts := w.busOptions()
	opts.HTTPPort = -1
	bus := startBus(t, opts)
	ref, _ := startReferenceFile(t, w.referenceConfig("http_port: -1"))
	outcomes := map[string][]string{}
	for _, side := range []struct{ name, url, http string }{
		{"bus", busURL(bus), "http://" + bus.HTTPAddr().String()},
		{"reference", ref.ClientURL(), "http://" + ref.MonitorAddr().String()},
	} {
		t.Run(side.name, func(t *testing.T) {
			var conns []*nats.Conn
			for _, name := range []string{"plain", "signing-key", "bearer"} {
				conns = append(conns, connect(t, side.url, nats.UserCredentials(users[name]), nats.Name(name)))
			}
			listing := func(query string) []string {
				var body struct {
					Conns []struct {
						Name      string `json:"name"`
						JWT       string `json:"jwt"`
						IssuerKey string `json:"issuer_key"`
					} `json:"connections"`
				}
				getJSON(t, side.http+"/connz?"+query, &body)
				var out []string
				for _, c := range body.Conns {
					out = append(out, fmt.Sprintf("%s %s: jwt %q, issuer_key %q", query, c.Name, cmpName(names, c.JWT), cmpName(names, c.IssuerKey)))
				}
				slices.Sort(out)
				return out
			}
			got := append(listing("auth=true"), listing("auth=false")...)
			for _, nc := range conns {
				nc.Close()
			}
			waitClosedConns(t, side.http, len(conns))
			got = append(got, listing("state=closed&auth=true")...)
			outcomes[side.name] = append(got, listing("state=closed")...)
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}

// cmpName is what names calls key, or key itself when it is "" or
// unknown.
func cmpName(names map[string]string, key string) string {
	if n, ok := names[key]; ok {
		return n
	}
	return key
}

// waitClosedConns waits until /connz at base lists n closed connections.
func waitClosedConns(t *testing.T, base string, n int) {
	t.Helper()
	eventually(t, 5*time.Second, func() bool {
		var body struct {
			NumConns int `json:"num_connections"`
		}
		getJSON(t, base+"/connz?state=closed", &body)
		return body.NumConns >= n
	})
}

// TestConnzNkeyIssuer checks /connz?auth=true's issuer_key of users of
// the configuration against the reference: an nkey user's account (the
// global one here), nothing for a password user.
func TestConnzNkeyIssuer(t *testing.T) {
	t.Parallel()
	seed, pub := newNkeyUser(t)
	auth := server.Authorization{Users: []server.User{{Nkey: pub}, {Name: "u", Password: "p"}}}
	bus := startBus(t, server.Options{Authorization: auth, HTTPPort: -1})
	refOpts := refOptions(auth)
	refOpts.HTTPHost, refOpts.HTTPPort = "127.0.0.1", -1
	ref := startReferenceServer(t, refOpts)
	bothSides(t, busURL(bus), ref.ClientURL(), func(t *testing.T, url string) []string {
		base := "http://" + bus.HTTPAddr().String()
		if url == ref.ClientURL() {
			base = "http://" + ref.MonitorAddr().String()
		}
		connect(t, url, nkeyOption(t, pub, seed), nats.Name("nkey"))
		connect(t, url, nats.UserInfo("u", "p"), nats.Name("password"))
		var body struct {
			Conns []struct {
				Name      string `json:"name"`
				JWT       string `json:"jwt"`
				IssuerKey string `json:"issuer_key"`
			} `json:"connections"`
		}
		getJSON(t, base+"/connz?auth=true", &body)
		var out []string
		for _, c := range body.Conns {
			out = append(out, fmt.Sprintf("%s: jwt %q, issuer_key %q", c.Name, c.JWT, c.IssuerKey))
		}
		slices.Sort(out)
		return out
	})
}
