// Command checkout is the checkout service: each placed order fans out
// to four consumers of one stream (charge, inventory, e-mail,
// analytics). Charging is flaky (the first attempt of every order fails
// and is retried with back-off); one order has an e-mail address no
// retry can fix, so its receipt goes to the dead-letter queue after one
// attempt. It prints what happened and the DLQ's contents.
//
// Its streams (CHECKOUT on checkout.orders.>, CHECKOUT_DLQ on
// dlq.checkout) overlap none of the README's (ORDERS on orders.>, DLQ on
// dlq.orders, …), so it runs on a bus the README was followed on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

// OrderPlaced is the event every consumer handles.
type OrderPlaced struct {
	OrderID string  `json:"order_id"`
	Email   string  `json:"email"`
	Total   float64 `json:"total"`
}

// tally counts what each consumer did, for the summary and the test.
type tally struct {
	mu       sync.Mutex
	attempts map[string]int // "consumer/order" → attempts
	done     map[string]int // consumer → orders completed
}

func (t *tally) attempt(consumer, order string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.attempts[consumer+"/"+order]++
	return t.attempts[consumer+"/"+order]
}

func (t *tally) finish(consumer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.done[consumer]++
}

func (t *tally) count(consumer string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done[consumer]
}

// handlers are the four consumers; out is shared, so writes are locked.
func handlers(t *tally, out io.Writer) map[string]client.Handler[OrderPlaced] {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	return map[string]client.Handler[OrderPlaced]{
		"charge": func(ctx context.Context, ev client.Event[OrderPlaced]) error {
			if n := t.attempt("charge", ev.Data.OrderID); n == 1 {
				say("charge    %s: payment provider timed out, will retry", ev.Data.OrderID)
				return errors.New("payment provider timed out")
			}
			say("charge    %s: charged %.2f", ev.Data.OrderID, ev.Data.Total)
			t.finish("charge")
			return nil
		},
		"inventory": func(ctx context.Context, ev client.Event[OrderPlaced]) error {
			t.finish("inventory")
			return nil
		},
		"email": func(ctx context.Context, ev client.Event[OrderPlaced]) error {
			t.attempt("email", ev.Data.OrderID)
			if !strings.Contains(ev.Data.Email, "@") {
				say("email     %s: %q is no address, giving up", ev.Data.OrderID, ev.Data.Email)
				return client.Permanent(fmt.Errorf("invalid e-mail address %q", ev.Data.Email))
			}
			t.finish("email")
			return nil
		},
		"analytics": func(ctx context.Context, ev client.Event[OrderPlaced]) error {
			t.finish("analytics")
			return nil
		},
	}
}

// run places orders and waits until every consumer is through with
// them, then prints the dead-letter queue.
func run(ctx context.Context, url string, orders int, out io.Writer) (*tally, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	c, err := client.New(nc, client.Options{Source: "/checkout"})
	if err != nil {
		return nil, err
	}
	t := &tally{attempts: map[string]int{}, done: map[string]int{}}
	for name, h := range handlers(t, out) {
		w, err := client.NewWorker(c, client.WorkerConfig{
			Stream:            "CHECKOUT",
			Subjects:          []string{"checkout.orders.>"},
			Consumer:          name,
			Concurrency:       4,
			Retry:             client.RetryPolicy{MaxAttempts: 4, InitialDelay: 100 * time.Millisecond},
			DeadLetterSubject: "dlq.checkout",
			DeadLetterStream:  "CHECKOUT_DLQ",
		}, h)
		if err != nil {
			return nil, err
		}
		if err := w.Start(ctx); err != nil {
			return nil, err
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = w.Shutdown(sctx)
		}()
	}

	p, err := client.NewProducer(c, client.ProducerOptions{})
	if err != nil {
		return nil, err
	}
	for i := 1; i <= orders; i++ {
		o := OrderPlaced{OrderID: fmt.Sprintf("o-%d", i), Email: fmt.Sprintf("buyer%d@example.com", i), Total: float64(10 * i)}
		if i == 2 {
			o.Email = "not-an-address" // the poisoned order
		}
		if _, err := client.Produce(ctx, p, "checkout.orders.placed", o, client.WithID(o.OrderID)); err != nil {
			return nil, err
		}
	}

	// Everyone is through when every order is charged, stocked and
	// counted, and every receipt sent except the poisoned one.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for t.count("charge") < orders || t.count("inventory") < orders || t.count("analytics") < orders ||
		t.count("email") < orders-1 || deadLetters(ctx, c) < 1 {
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-tick.C:
		}
	}
	return t, printDeadLetters(ctx, c, out)
}

// deadLetters is how many messages the DLQ stream holds.
func deadLetters(ctx context.Context, c *client.Conn) uint64 {
	st, err := c.JetStream().Stream(ctx, "CHECKOUT_DLQ")
	if err != nil {
		return 0
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.Msgs
}

// printDeadLetters shows what the DLQ stream holds.
func printDeadLetters(ctx context.Context, c *client.Conn, out io.Writer) error {
	st, err := c.JetStream().Stream(ctx, "CHECKOUT_DLQ")
	if err != nil {
		return err
	}
	for seq := uint64(1); ; seq++ {
		msg, err := st.GetMsg(ctx, seq)
		if err != nil {
			return nil // past the last one (or none yet)
		}
		fmt.Fprintf(out, "dead letter: order %s from consumer %s after %s delivery: %s\n",
			msg.Header.Get(client.HeaderID), msg.Header.Get(client.HeaderDLQConsumer),
			msg.Header.Get(client.HeaderDLQDeliveries), msg.Header.Get(client.HeaderDLQReason))
	}
}

func main() {
	url := flag.String("url", nats.DefaultURL, "bus server URL")
	orders := flag.Int("orders", 5, "orders to place")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := run(ctx, *url, *orders, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "checkout:", err)
		os.Exit(1)
	}
}
