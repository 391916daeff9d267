// Command flashsale is a burst: 10,000 orders arrive within seconds, and
// a pool of workers drains them at a fixed rate (as a payment provider
// with a rate limit would), while the queue depth is printed as it rises
// and falls. The stream absorbs the burst; nobody is turned away.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

// Order is one flash-sale purchase.
type Order struct {
	ID  int    `json:"id"`
	SKU string `json:"sku"`
}

// Config sizes the burst and the drain.
type Config struct {
	Orders     int           // orders in the burst
	Rate       int           // orders handled per second, by the whole pool
	Workers    int           // concurrent handlers
	Producers  int           // concurrent publishers
	PrintEvery time.Duration // queue depth sampling
}

// run returns the queue depths it printed.
func run(ctx context.Context, url string, cfg Config, out io.Writer) ([]uint64, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	c, err := client.New(nc, client.Options{})
	if err != nil {
		return nil, err
	}
	// A fixed rate for the pool: every handler waits for a tick.
	limiter := time.NewTicker(time.Second / time.Duration(cfg.Rate))
	defer limiter.Stop()
	var handled atomic.Int64
	wcfg := client.WorkerConfig{
		Stream:      "SALE",
		Subjects:    []string{"sale.orders"},
		Consumer:    "fulfil",
		Concurrency: cfg.Workers,
	}
	w, err := client.NewWorker(c, wcfg, func(ctx context.Context, ev client.Event[Order]) error {
		select {
		case <-limiter.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		handled.Add(1)
		return nil
	})
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

	cons, err := c.JetStream().Consumer(ctx, "SALE", "fulfil")
	if err != nil {
		return nil, err
	}
	start := time.Now()
	stored := make(chan error, 1)
	go func() { stored <- burst(ctx, c, cfg) }()
	burstDone := false
	var depths []uint64
	tick := time.NewTicker(cfg.PrintEvery)
	defer tick.Stop()
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			return depths, err
		}
		depth := info.NumPending + uint64(info.NumAckPending)
		depths = append(depths, depth)
		fmt.Fprintf(out, "t=%-6v queue depth %5d, handled %5d\n", time.Since(start).Round(10*time.Millisecond), depth, handled.Load())
		if burstDone && depth == 0 && handled.Load() >= int64(cfg.Orders) {
			return depths, nil
		}
		select {
		case <-ctx.Done():
			if !burstDone {
				<-stored // the producers stop with ctx
			}
			return depths, ctx.Err()
		case err := <-stored:
			if err != nil {
				return depths, err
			}
			burstDone = true
			fmt.Fprintf(out, "t=%-6v all %d orders stored\n", time.Since(start).Round(10*time.Millisecond), cfg.Orders)
		case <-tick.C:
		}
	}
}

// burst publishes the orders from cfg.Producers goroutines at once.
func burst(ctx context.Context, c *client.Conn, cfg Config) error {
	p, err := client.NewProducer(c, client.ProducerOptions{})
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Producers)
	for g := range cfg.Producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := g; id < cfg.Orders; id += cfg.Producers {
				if _, err := client.Produce(ctx, p, "sale.orders", Order{ID: id, SKU: "console"}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when the channel is empty
}

func main() {
	url := flag.String("url", nats.DefaultURL, "bus server URL")
	cfg := Config{}
	flag.IntVar(&cfg.Orders, "orders", 10_000, "orders in the burst")
	flag.IntVar(&cfg.Rate, "rate", 2_000, "orders handled per second")
	flag.IntVar(&cfg.Workers, "workers", 16, "concurrent handlers")
	flag.IntVar(&cfg.Producers, "producers", 32, "concurrent publishers")
	flag.DurationVar(&cfg.PrintEvery, "every", 500*time.Millisecond, "how often to print the queue depth")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := run(ctx, *url, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "flashsale:", err)
		os.Exit(1)
	}
}
