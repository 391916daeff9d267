package tests

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/bus-dev/bus/server"
)

// A bcrypt hash cheaper than cost 10 is cheap to crack from a leaked
// config file: bus warns at start, naming the user and never the hash
// (security issue #22). The reference warns of plain text passwords
// only, so there is nothing to compare with.
func TestStartWarnsOfCheapBcryptHashes(t *testing.T) {
	hash := func(cost int) string {
		h, err := bcrypt.GenerateFromPassword([]byte("secret"), cost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	cheap, sysCheap := hash(bcrypt.MinCost), hash(bcrypt.MinCost+1)
	log, logs := newLogBuffer()
	startBus(t, server.Options{
		Logger: log,
		Authorization: server.Authorization{Users: []server.User{
			{Name: "alice", Password: cheap},
			{Name: "bob", Password: hash(bcrypt.DefaultCost)},
			{Name: "carol", Password: "plain"},
		}},
		SystemAccount: server.SystemAccount{Users: []server.User{{Name: "sys", Password: sysCheap}}},
	})
	const warning = "bcrypt cost below 10"
	if got := logs.lines(warning, "user=alice", "cost=4"); len(got) != 1 {
		t.Errorf("warnings for alice (cost 4): %q", got)
	}
	if got := logs.lines(warning, "user=sys", "account=$SYS", "cost=5"); len(got) != 1 {
		t.Errorf("warnings for the system user sys (cost 5): %q", got)
	}
	if got := logs.lines(warning); len(got) != 2 {
		t.Errorf("want exactly the two warnings (bob has cost 10, carol no hash), got %q", got)
	}
	for _, secret := range []string{cheap, sysCheap, cheap[7:], sysCheap[7:]} {
		if got := logs.lines(secret); len(got) > 0 {
			t.Errorf("the log shows a hash: %q", got)
		}
	}
}

func TestStartWarnsOfACheapBcryptToken(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("tok"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	log, logs := newLogBuffer()
	startBus(t, server.Options{Logger: log, Authorization: server.Authorization{Token: string(h)}})
	if got := logs.lines("bcrypt cost below 10", "secret=token", "cost=4"); len(got) != 1 || strings.Contains(got[0], string(h)) {
		t.Errorf("token warning: %q", got)
	}
}
