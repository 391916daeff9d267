package server

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/nats-io/nkeys"
)

// fuzzSeed is a fixed user key for FuzzConnectJSON, so that committed
// corpus entries keep their meaning.
const fuzzSeed = "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4"

// FuzzConnectJSON feeds any CONNECT body to the authenticator of every
// kind of authorization block. Oracle: nothing panics, and a client is let
// in only with the exact configured secret, a signature of this
// connection's nonce by the configured key, or no credentials at all when
// a no_auth_user exists.
func FuzzConnectJSON(f *testing.F) {
	kp, err := nkeys.FromSeed([]byte(fuzzSeed))
	if err != nil {
		f.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	const nonce = "bm9uY2Utbm9uY2U"
	sig, _ := kp.Sign([]byte(nonce))
	for _, s := range []string{
		`{"verbose":false,"pedantic":false,"tls_required":false,"name":"","lang":"go","version":"1.55.0","protocol":1,"echo":true,"headers":true,"no_responders":true}`,
		`{"verbose":false,"pedantic":false,"user":"alice","pass":"pw","lang":"go","version":"1.55.0","protocol":1}`,
		`{"user":"alice","pass":"PW"}`,
		`{"auth_token":"tok"}`,
		`{"auth_token":"tok","user":"alice"}`,
		`{"nkey":"` + pub + `","sig":"` + base64.RawURLEncoding.EncodeToString(sig) + `"}`,
		`{"nkey":"` + pub + `","sig":"` + base64.StdEncoding.EncodeToString(sig) + `"}`,
		`{"nkey":"` + pub + `"}`,
		`{"nkey":"` + pub + `","sig":"AAAA"}`,
		`{"jwt":"eyJ0eXAiOiJKV1QifQ","sig":"x"}`,
		`{"user":"alice","pass":null}`,
		`{"user":1}`,
		`{}`,
		`[]`,
		`{"user":"\u0000alice","pass":"pw"}`,
	} {
		f.Add([]byte(s))
	}
	blocks := []Authorization{
		{Token: "tok"},
		{User: "alice", Password: "pw"},
		{Users: []User{{Name: "alice", Password: "pw"}, {Nkey: pub}}},
		{Users: []User{{Name: "alice", Password: "pw"}, {Nkey: pub}, {Name: "guest", Password: "g"}}, NoAuthUser: "guest"},
	}
	auths := make([]*authenticator, len(blocks))
	for i, b := range blocks {
		if err := b.validate(); err != nil {
			f.Fatal(err)
		}
		auths[i] = newAuthenticator(b, false)
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		var opts connectOptions
		if json.Unmarshal(js, &opts) != nil {
			return // closed without a word before authentication
		}
		cr := opts.credentials
		for i, a := range auths {
			id, fail := a.authenticate(cr, nonce, nil)
			if (id == nil) == (fail == nil) {
				t.Fatalf("block %d: identity %v and failure %v", i, id, fail)
			}
			if id == nil {
				continue
			}
			b := blocks[i]
			signed := cr.Nkey == pub && verifyNonce(pub, cr.Sig, nonce) == ""
			noCreds := cr.User == "" && cr.Pass == "" && cr.Token == "" && cr.Nkey == ""
			ok := false
			switch {
			case b.Token != "":
				ok = cr.Token == "tok"
			case b.User != "":
				ok = cr.User == "alice" && cr.Pass == "pw"
			default:
				ok = cr.User == "alice" && cr.Pass == "pw" || signed || b.NoAuthUser != "" && (noCreds || cr.User == "guest" && cr.Pass == "g")
			}
			if !ok {
				t.Fatalf("block %d let in %+v as %q", i, cr, id.name)
			}
		}
	})
}
