package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/jwt/v2"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// A hub in operator mode (accounts and users as JWTs) takes a bus leaf
// that authenticates with a .creds file: bus sends the user JWT and signs
// the hub's nonce with the file's seed. The link binds bus to that user's
// account, and messages cross it both ways.
func TestLeafAuthenticatesWithCredsFile(t *testing.T) {
	op, _ := nkeys.CreateOperator()
	opPub, _ := op.PublicKey()
	opClaims := jwt.NewOperatorClaims(opPub)
	opJWT, err := opClaims.Encode(op)
	must(t, err)
	opClaims, err = jwt.DecodeOperatorClaims(opJWT)
	must(t, err)

	resolver := &natsserver.MemAccResolver{}
	newAccount := func(name string) (nkeys.KeyPair, string) {
		kp, _ := nkeys.CreateAccount()
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		ac.Name = name
		token, err := ac.Encode(op)
		must(t, err)
		must(t, resolver.Store(pub, token))
		return kp, pub
	}
	_, sysPub := newAccount("SYS")
	acc, accPub := newAccount("APP")

	user, _ := nkeys.CreateUser()
	userPub, _ := user.PublicKey()
	uc := jwt.NewUserClaims(userPub)
	uc.IssuerAccount = accPub
	userJWT, err := uc.Encode(acc)
	must(t, err)
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(userJWT, seed)
	must(t, err)
	credsFile := filepath.Join(t.TempDir(), "leaf.creds")
	must(t, os.WriteFile(credsFile, creds, 0o600))

	hub := startHubCluster(t, 1, false, func(o *natsserver.Options) {
		o.TrustedOperators = []*jwt.OperatorClaims{opClaims}
		o.AccountResolver = resolver
		o.SystemAccount = sysPub
	})
	leaf := startBusLeaf(t, hub, server.Options{}, server.LeafRemote{URLs: hub.leafURLs(), Credentials: credsFile})
	onHub := connect(t, hub.clientURL(0), nats.UserCredentials(credsFile))
	onLeaf := connect(t, busURL(leaf))
	hubSub, leafSub := subSync(t, onHub, "app.up", ""), subSync(t, onLeaf, "app.down", "")
	awaitRoute(t, onLeaf, hubSub, "app.up")
	awaitRoute(t, onHub, leafSub, "app.down")
	must(t, onLeaf.Publish("app.up", []byte("signed")))
	must(t, onHub.Publish("app.down", []byte("signed")))
	if got := append(drainLeaf(t, "hub", hubSub, 1), drainLeaf(t, "leaf", leafSub, 1)...); len(got) != 2 {
		t.Fatalf("across a creds-authenticated link: %q", got)
	}
}
