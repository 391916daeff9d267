package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/bus-dev/bus/server"
)

// jwtWorld is an operator with its accounts, made for one test: the
// operator-mode config for bus and for the reference, and users' .creds
// files.
type jwtWorld struct {
	t        *testing.T
	operator nkeys.KeyPair
	opJWT    string
	sysKey   string
	accounts map[string]*jwtAccount // by test name ("A", "SYS")
}

type jwtAccount struct {
	kp     nkeys.KeyPair
	pub    string
	claims *jwt.AccountClaims
	jwt    string
}

// newJWTWorld makes an operator and its system account SYS.
func newJWTWorld(t *testing.T) *jwtWorld {
	t.Helper()
	op, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opPub, _ := op.PublicKey()
	w := &jwtWorld{t: t, operator: op, accounts: map[string]*jwtAccount{}}
	w.addAccount("SYS", nil)
	w.sysKey = w.accounts["SYS"].pub
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "op"
	oc.SystemAccount = w.sysKey
	if w.opJWT, err = oc.Encode(op); err != nil {
		t.Fatal(err)
	}
	return w
}

// addAccount makes (or, when name exists, re-signs with edit applied)
// an account JWT signed by the operator.
func (w *jwtWorld) addAccount(name string, edit func(*jwt.AccountClaims)) *jwtAccount {
	w.t.Helper()
	a := w.accounts[name]
	if a == nil {
		kp, err := nkeys.CreateAccount()
		if err != nil {
			w.t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		a = &jwtAccount{kp: kp, pub: pub, claims: jwt.NewAccountClaims(pub)}
		a.claims.Name = name
		w.accounts[name] = a
	}
	if edit != nil {
		edit(a.claims)
	}
	var err error
	if a.jwt, err = a.claims.Encode(w.operator); err != nil {
		w.t.Fatal(err)
	}
	return a
}

// user makes a user of account name, signed by the account (or by
// signer when set), and returns its .creds file and public key.
func (w *jwtWorld) user(name string, signer nkeys.KeyPair, edit func(*jwt.UserClaims)) (creds, pub string) {
	w.t.Helper()
	a := w.accounts[name]
	kp, err := nkeys.CreateUser()
	if err != nil {
		w.t.Fatal(err)
	}
	pub, _ = kp.PublicKey()
	uc := jwt.NewUserClaims(pub)
	if signer != nil {
		uc.IssuerAccount = a.pub
	} else {
		signer = a.kp
	}
	if edit != nil {
		edit(uc)
	}
	token, err := uc.Encode(signer)
	if err != nil {
		w.t.Fatal(err)
	}
	seed, _ := kp.Seed()
	data, err := jwt.FormatUserConfig(token, seed)
	if err != nil {
		w.t.Fatal(err)
	}
	creds = filepath.Join(w.t.TempDir(), "user.creds")
	if err := os.WriteFile(creds, data, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return creds, pub
}

// busOptions is operator mode for bus with the accounts as they are now.
func (w *jwtWorld) busOptions() server.Options {
	o := &server.Operator{JWTs: []string{w.opJWT}, SystemAccount: w.sysKey, Accounts: map[string]string{}}
	for _, a := range w.accounts {
		o.Accounts[a.pub] = a.jwt
	}
	return server.Options{Operator: o}
}

// referenceConfig is the same for the reference, as a config file's text
// (with the %q of writeReferenceConfig for the store directory).
func (w *jwtWorld) referenceConfig(extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "host: 127.0.0.1\nport: -1\noperator: %s\nsystem_account: %s\nresolver: MEMORY\nstore_dir: %%q\n%s\nresolver_preload: {\n", w.opJWT, w.sysKey, extra)
	names := make([]string, 0, len(w.accounts))
	for n := range w.accounts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s: %s\n", w.accounts[n].pub, w.accounts[n].jwt)
	}
	b.WriteString("}\n")
	return b.String()
}

// jwtPair is bus and the reference in the same operator mode.
type jwtPair struct {
	bus     *server.Server
	refURL  string
	refPath string
}

func startJWTPair(t *testing.T, w *jwtWorld) jwtPair {
	t.Helper()
	ref, path := startReferenceFile(t, w.referenceConfig(""))
	return jwtPair{bus: startBus(t, w.busOptions()), refURL: ref.ClientURL(), refPath: path}
}

// readFile is path's content.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// jwtOf is the user JWT of a .creds file.
func jwtOf(t *testing.T, creds string) string {
	t.Helper()
	token, err := jwt.ParseDecoratedJWT(readFile(t, creds))
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func sortStrings(s []string) { slices.Sort(s) }
