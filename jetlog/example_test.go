package jetlog_test

import (
	"fmt"
	"os"

	"github.com/bus-dev/bus/jetlog"
)

func Example() {
	dir, err := os.MkdirTemp("", "jetlog-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	l, err := jetlog.Open(dir, jetlog.StreamConfig{Name: "ORDERS", MaxMsgsPerSubject: 2}, jetlog.Options{})
	if err != nil {
		panic(err)
	}
	for _, data := range []string{"new", "paid", "shipped"} {
		if _, err := l.Append(jetlog.Msg{Subject: "orders.42", Data: []byte(data)}, jetlog.Expect{}); err != nil {
			panic(err)
		}
	}
	last, err := l.LastBySubject("orders.*")
	if err != nil {
		panic(err)
	}
	st := l.State()
	fmt.Println(last.Seq, string(last.Data), st.FirstSeq, st.Msgs)
	if err := l.Close(); err != nil {
		panic(err)
	}
	// Output: 3 shipped 2 2
}
