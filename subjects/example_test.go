package subjects_test

import (
	"fmt"

	"github.com/bus-dev/bus/subjects"
)

func ExampleTrie() {
	// Values are whatever identifies a subscription; the server uses a
	// pointer to its subscription record.
	tr := subjects.NewTrie[string]()
	for _, s := range []struct{ pattern, queue, id string }{
		{"orders.*", "", "audit"},
		{"orders.>", "workers", "w1"},
		{"orders.>", "workers", "w2"},
		{"invoices.>", "", "billing"},
	} {
		if err := tr.Insert(s.pattern, s.queue, s.id); err != nil {
			fmt.Println(err)
		}
	}

	r := tr.MatchString("orders.new")
	fmt.Println("plain:", r.Plain)
	for _, g := range r.Queues {
		fmt.Println("queue", g.Name+":", g.Members, "(deliver to one)")
	}

	err := tr.Insert("orders..new", "", "oops")
	fmt.Println(err)
	// Output:
	// plain: [audit]
	// queue workers: [w1 w2] (deliver to one)
	// subjects: insert "orders..new": subjects: invalid subject
}

func ExampleValidSubject() {
	for _, s := range []string{"foo.*", "foo.>", "foo.>.bar", "foo..bar", "fo*"} {
		fmt.Printf("%-10s subscribe=%v publish=%v\n", s, subjects.ValidSubject(s), subjects.ValidLiteral(s))
	}
	// Output:
	// foo.*      subscribe=true publish=false
	// foo.>      subscribe=true publish=false
	// foo.>.bar  subscribe=false publish=false
	// foo..bar   subscribe=false publish=false
	// fo*        subscribe=true publish=true
}
