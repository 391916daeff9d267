// Command rpc shows typed request-reply: a pricing service answers
// QuoteRequest with Quote, and a handler error reaches the caller as a
// *client.RemoteError.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/client"
)

// QuoteRequest asks for the price of some items.
type QuoteRequest struct {
	Items []string `json:"items"`
}

// Quote is the answer.
type Quote struct {
	Total    float64 `json:"total"`
	Currency string  `json:"currency"`
}

var prices = map[string]float64{"tea": 3.5, "cup": 8, "pot": 24}

// price is the service's handler.
func price(_ context.Context, ev client.Event[QuoteRequest]) (Quote, error) {
	q := Quote{Currency: "EUR"}
	for _, it := range ev.Data.Items {
		p, ok := prices[it]
		if !ok {
			return Quote{}, &client.RemoteError{Code: "404", Message: "no price for " + it}
		}
		q.Total += p
	}
	return q, nil
}

func run(ctx context.Context, url string, out io.Writer) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	c, err := client.New(nc, client.Options{})
	if err != nil {
		return err
	}
	sub, err := client.Handle(c, "pricing.quote", price, client.WithQueue("pricing"))
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()

	for _, items := range [][]string{{"tea", "cup"}, {"pot"}, {"tea", "scone"}} {
		q, err := client.Request[QuoteRequest, Quote](ctx, c, "pricing.quote", QuoteRequest{Items: items})
		var re *client.RemoteError
		switch {
		case errors.As(err, &re):
			fmt.Fprintf(out, "%v: error %s: %s\n", items, re.Code, re.Message)
		case err != nil:
			return err
		default:
			fmt.Fprintf(out, "%v: %.2f %s\n", items, q.Total, q.Currency)
		}
	}
	return nil
}

func main() {
	url := flag.String("url", nats.DefaultURL, "bus server URL")
	flag.Parse()
	if err := run(context.Background(), *url, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rpc:", err)
		os.Exit(1)
	}
}
