package main

import (
	"context"
	"fmt"
	"strings"
)

// The accounts scenarios run both servers with an accounts block: n
// accounts A0 … A<n-1>, each with one user (u0 …), and IMP (user imp),
// which imports A0's stream bench.> and its service bench.service. The
// traffic of one account (u0 to u0) beside 1 or 100 accounts measures
// what the number of accounts costs the hot path; u0 to imp goes
// through the stream import, imp's requests through the service import.

// accountsPassword is every bench account user's password.
const accountsPassword = "benchpw"

// accountsBlock is the config text of n accounts and the importer.
func accountsBlock(n int) string {
	var b strings.Builder
	b.WriteString("accounts {\n")
	for i := range n {
		fmt.Fprintf(&b, "  A%d { users: [ {user: u%d, password: %s} ]", i, i, accountsPassword)
		if i == 0 {
			b.WriteString(`, exports: [ {stream: "bench.>"}, {service: "bench.service"} ]`)
		}
		b.WriteString(" }\n")
	}
	fmt.Fprintf(&b, "  IMP { users: [ {user: imp, password: %s} ], imports: [ {stream: {account: A0, subject: \"bench.>\"}}, {service: {account: A0, subject: \"bench.service\"}} ] }\n", accountsPassword)
	b.WriteString("}\n")
	return b.String()
}

// idleRSS is the server's resident set size with nothing connected: with
// an accounts block, what the configured accounts cost.
func idleRSS(_ context.Context, e *env) ([]float64, error) {
	e.note("(in process) VmRSS from /proc/<pid>/status of the idle server")
	rss, err := e.srv.rss()
	if err != nil {
		return nil, err
	}
	return []float64{mib(rss)}, nil
}
