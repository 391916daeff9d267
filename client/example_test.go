package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
	"github.com/bus-dev/bus/server"
)

// exampleServer starts an in-process bus for an example; real programs
// connect to a running one (go run ./cmd/bus serve).
func exampleServer() (url string, stop func()) {
	dir, _ := os.MkdirTemp("", "bus-example-")
	s, err := server.New(server.Options{Host: "127.0.0.1", JetStream: true, StoreDir: dir})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		panic(err) // examples have no *testing.T
	}
	return "nats://" + s.Addr().String(), func() {
		_ = s.Shutdown(context.Background())
		_ = os.RemoveAll(dir)
	}
}

type OrderPlaced struct {
	OrderID string  `json:"order_id"`
	Total   float64 `json:"total"`
}

func ExamplePublish() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	c, _ := client.New(nc, client.Options{})

	got := make(chan client.Event[OrderPlaced], 1)
	sub, _ := client.Subscribe(c, "orders.placed", func(ctx context.Context, ev client.Event[OrderPlaced]) {
		got <- ev
	})
	defer sub.Unsubscribe()
	_ = nc.Flush()

	_ = client.Publish(context.Background(), c, "orders.placed", OrderPlaced{OrderID: "o-1", Total: 9.5}, client.WithID("o-1"))
	ev := <-got
	fmt.Println(ev.ID, ev.Type, ev.Data.Total, ev.Header.Get(client.HeaderContentType))
	// Output: o-1 client_test.OrderPlaced 9.5 application/msgpack
}

type Quote struct {
	Total float64 `json:"total"`
}

func ExampleRequest() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	c, _ := client.New(nc, client.Options{})

	sub, _ := client.Handle(c, "quote", func(ctx context.Context, ev client.Event[OrderPlaced]) (Quote, error) {
		return Quote{Total: ev.Data.Total * 1.2}, nil
	})
	defer sub.Unsubscribe()

	q, err := client.Request[OrderPlaced, Quote](context.Background(), c, "quote", OrderPlaced{Total: 10})
	fmt.Println(q.Total, err)
	// Output: 12 <nil>
}

func ExampleWorker() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	c, _ := client.New(nc, client.Options{})

	done := make(chan struct{})
	attempts := 0
	w, _ := client.NewWorker(c, client.WorkerConfig{
		Stream:            "ORDERS",
		Subjects:          []string{"orders.>"},
		Consumer:          "charge",
		Concurrency:       4,
		Retry:             client.RetryPolicy{MaxAttempts: 5, InitialDelay: 10 * time.Millisecond},
		DeadLetterSubject: "dlq.orders",
		DeadLetterStream:  "ORDERS_DLQ",
	}, func(ctx context.Context, ev client.Event[OrderPlaced]) error {
		attempts++ // one message at a time here, so no race
		if attempts < 3 {
			return errors.New("payment provider timed out") // retried with back-off
		}
		fmt.Println("charged", ev.Data.OrderID, "on attempt", attempts)
		close(done)
		return nil
	})
	if err := w.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	p, _ := client.NewProducer(c, client.ProducerOptions{})
	_, _ = client.Produce(context.Background(), p, "orders.placed", OrderPlaced{OrderID: "o-1"})
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(w.Shutdown(ctx))
	// Output:
	// charged o-1 on attempt 3
	// <nil>
}

func ExampleProduce() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	c, _ := client.New(nc, client.Options{})
	_ = client.EnsureStream(context.Background(), c, client.WorkerConfig{Stream: "ORDERS", Subjects: []string{"orders.>"}})

	p, _ := client.NewProducer(c, client.ProducerOptions{})
	for range 2 { // a retry of the same fact, e.g. after a crash
		ack, err := client.Produce(context.Background(), p, "orders.placed", OrderPlaced{OrderID: "o-1"}, client.WithID("order-o-1"))
		fmt.Println(ack.Seq, ack.Duplicate, err)
	}
	// Output:
	// 1 false <nil>
	// 1 true <nil>
}

func ExampleRetryPolicy_Delay() {
	p := client.RetryPolicy{InitialDelay: time.Second, MaxDelay: 10 * time.Second, Jitter: 0.2}.WithDefaults()
	for attempt := 1; attempt <= 5; attempt++ {
		// r is a uniform random number in [0, 1); 0.5 is the middle.
		fmt.Println(attempt, p.Base(attempt), p.Delay(attempt, 0), p.Delay(attempt, 0.5))
	}
	// Output:
	// 1 1s 800ms 1s
	// 2 2s 1.6s 2s
	// 3 4s 3.2s 4s
	// 4 8s 6.4s 8s
	// 5 10s 8s 10s
}

func ExamplePermanent() {
	err := fmt.Errorf("charge o-1: %w", client.Permanent(errors.New("card number malformed")))
	fmt.Println(client.IsPermanent(err), err)
	// Output: true charge o-1: card number malformed
}

func ExampleIdempotent() {
	store := client.NewMemoryStore(client.MemoryStoreOptions{TTL: time.Hour})
	charges := 0
	h := client.Idempotent(store, func(ctx context.Context, ev client.Event[OrderPlaced]) error {
		charges++
		return nil
	})
	ev := client.Event[OrderPlaced]{ID: "o-1"}
	for range 3 { // delivered three times
		_ = h(context.Background(), ev)
	}
	fmt.Println("charged", charges, "time")
	// Output: charged 1 time
}

func ExampleConn_Server() {
	url, stop := exampleServer()
	defer stop()
	nc, _ := nats.Connect(url)
	defer nc.Close()
	c, _ := client.New(nc, client.Options{})
	info, _ := c.Server(context.Background())
	fmt.Println(info.IsBus(), info.Has(client.ExtDeadLetterSubject))
	// Output: true true
}
