package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// TestReadmeSeveralTeams runs the README's "Several teams on one bus"
// commands against bus configured with its two accounts (plain
// passwords in place of the hashes) and checks what the README says they
// show: Alice's subscription to > gets her message and not Bob's, and
// `nats account info` names Bob's account.
func TestReadmeSeveralTeams(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	section := readmeSection(t, "## Several teams on one bus")
	for _, want := range []string{"TEAM_A:", "TEAM_B:", "{user: alice,", "{user: bob,", "max_connections: 50", "jetstream: {max_store: 10GB, max_streams: 20}"} {
		if !strings.Contains(section, want) {
			t.Fatalf("the README's config has no %q", want)
		}
	}
	s := startBus(t, server.Options{JetStream: true, Accounts: []server.Account{
		{Name: "TEAM_A", Users: []server.User{{Name: "alice", Password: "alicepw"}}, Limits: server.AccountLimits{MaxConnections: 50, MaxPayload: 1 << 20},
			JetStream: &server.AccountJetStream{MaxStore: 10 << 30, MaxStreams: 20}},
		{Name: "TEAM_B", Users: []server.User{{Name: "bob", Password: "bobpw"}}},
	}})
	url := busURL(s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmds := readmeNATSCommands(t, "## Several teams on one bus")
	if len(cmds) != 4 || cmds[0][4] != "sub" {
		t.Fatalf("README commands %q, want a sub, two pubs and an account info", cmds)
	}
	subOut := make(chan string, 1)
	go func() {
		out, _ := runCLI(t, ctx, bin, url, cmds[0]...)
		subOut <- out
	}()
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions == 1 })
	var info string
	for _, args := range cmds[1:] {
		out, err := runCLI(t, ctx, bin, url, args...)
		if err != nil {
			t.Fatalf("nats %q: %v\n%s", args, err, out)
		}
		info = out
	}
	sub := <-subOut
	if !strings.Contains(sub, "from-a") || strings.Contains(sub, "from-b") {
		t.Errorf("alice's sub printed\n%s\nwant from-a only", sub)
	}
	if !strings.Contains(info, "Account: TEAM_B (TEAM_B)") {
		t.Errorf("account info printed\n%s", info)
	}
	if !strings.Contains(section, "Account: TEAM_B (TEAM_B)") || !strings.Contains(section, "from-a") {
		t.Error("the README does not show what the commands print")
	}
}

// TestReadmeSharingAccounts runs the README's exports and imports
// example: TEAM_A's events reach TEAM_B under from_a, and TEAM_B's
// request on a.billing.* is answered by TEAM_A's billing.* responder.
func TestReadmeSharingAccounts(t *testing.T) {
	t.Parallel()
	section := readmeSection(t, "## Several teams on one bus")
	for _, want := range []string{`{stream: "events.>"}`, `{service: "billing.*", accounts: [TEAM_B]}`,
		`{stream: {account: TEAM_A, subject: "events.>"}, prefix: from_a}`, `{service: {account: TEAM_A, subject: "billing.*"}, to: "a.billing.*"}`} {
		if !strings.Contains(section, want) {
			t.Fatalf("the README's example has no %s", want)
		}
	}
	s := startBus(t, server.Options{Accounts: []server.Account{
		{Name: "TEAM_A", Users: []server.User{{Name: "alice", Password: accountsPass}}, Exports: server.Exports{
			Streams:  []server.StreamExport{{Subject: "events.>"}},
			Services: []server.ServiceExport{{Subject: "billing.*", Accounts: []string{"TEAM_B"}}},
		}},
		{Name: "TEAM_B", Users: []server.User{{Name: "bob", Password: accountsPass}}, Imports: server.Imports{
			Streams:  []server.StreamImport{{Account: "TEAM_A", Subject: "events.>", Prefix: "from_a"}},
			Services: []server.ServiceImport{{Account: "TEAM_A", Subject: "billing.*", To: "a.billing.*"}},
		}},
	}})
	alice, bob := connectAs(t, busURL(s), "alice"), connectAs(t, busURL(s), "bob")
	events, err := bob.SubscribeSync("from_a.events.>")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Subscribe("billing.*", func(m *nats.Msg) { _ = m.Respond([]byte("invoiced " + m.Subject)) }); err != nil {
		t.Fatal(err)
	}
	for _, nc := range []*nats.Conn{alice, bob} {
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := alice.Publish("events.signup", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if m, err := events.NextMsg(2 * time.Second); err != nil || m.Subject != "from_a.events.signup" {
		t.Fatalf("bob's event: %v %v", m, err)
	}
	m, err := bob.Request("a.billing.run", nil, 2*time.Second)
	if err != nil || string(m.Data) != "invoiced billing.run" {
		t.Fatalf("bob's request: %v %v", m, err)
	}
}
