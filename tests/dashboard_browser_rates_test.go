package tests

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// text is the text of the first element sel matches.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	// Read in one evaluation, not by node id: the dashboard re-renders
	// its tables every second, and a node found and then read in two
	// steps can be gone in between ("No node with given id found").
	deadline := time.Now().Add(10 * time.Second)
	for {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		got, err := chromedp.Run(tctx, chromedp.Evaluate[*string](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : null })()`, sel)))
		cancel()
		if err == nil && got != nil {
			return *got
		}
		if time.Now().After(deadline) {
			t.Fatalf("text of %s: %v (found: %v)", sel, err, got != nil)
		}
		time.Sleep(50 * time.Millisecond) // polling the page: nothing to wait on
	}
}

// The dashboard's first-hour problems (issue 23, item 7): a byte rate is
// whole bytes, not 230.23023023023 B/s; a mirror storing messages shows
// its store rate, not 0/s; two consumers as far behind draw lines that
// differ (dash, width), so one does not hide the other; and the two
// dead-letter counts say which is since start and which is now.
func TestDashboardInBrowserRatesLinesAndLabels(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	s := startBus(t, server.Options{JetStream: true, HTTPPort: -1})
	base := "http://" + s.HTTPAddr().String()
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	jctx := ctxT(t)
	orders, err := js.CreateStream(jctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(jctx, jetstream.StreamConfig{Name: "COPY", Mirror: &jetstream.StreamSource{Name: "ORDERS"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"billing", "audit"} {
		if _, err := orders.CreateOrUpdateConsumer(jctx, jetstream.ConsumerConfig{Durable: name, AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
			t.Fatal(err)
		}
	}
	published := 0
	publish := func(n int) {
		for range n {
			if _, err := js.Publish(jctx, fmt.Sprintf("orders.%d", published), []byte(`{"total":42}`)); err != nil {
				t.Fatal(err)
			}
			published++
		}
	}
	publish(5)

	// Equal lag, lines told apart.
	line := func(name string) string { return `#lag-chart polyline[data-series="` + name + `"][data-last="5"]` }
	do(t, ctx, "consumers view", chromedp.Navigate(base+"/#consumers/ORDERS"),
		chromedp.WaitReady(chromedp.CSS(line("billing"))), chromedp.WaitReady(chromedp.CSS(line("audit"))))
	b := attr(t, ctx, line("billing"), "stroke-dasharray") + "/" + attr(t, ctx, line("billing"), "stroke-width")
	a := attr(t, ctx, line("audit"), "stroke-dasharray") + "/" + attr(t, ctx, line("audit"), "stroke-width")
	if a == b {
		t.Errorf("two consumers with equal lag draw the same line (dash/width %s)", a)
	}
	if h := text(t, ctx, "#consumers-table thead"); !strings.Contains(h, "Dead-lettered, ever") {
		t.Errorf("consumers table headers %q: the dead-letter count does not say since when", h)
	}

	// The mirror's store rate moves while it stores.
	do(t, ctx, "streams view", chromedp.Navigate(base+"/#streams"),
		chromedp.WaitVisible(chromedp.CSS(`#streams-table tr[data-stream="COPY"] td.rate`)))
	eventually(t, 15*time.Second, func() bool {
		publish(20)
		return text(t, ctx, `#streams-table tr[data-stream="COPY"] td.rate`) != "0/s"
	})
	if h := text(t, ctx, "#streams-table thead"); !strings.Contains(h, "Store rate") || !strings.Contains(h, "Dead-lettered, ever") {
		t.Errorf("streams table headers %q", h)
	}

	// Byte rates are whole bytes; the dead-letter card says ever and now.
	do(t, ctx, "overview", chromedp.Navigate(base+"/#overview"), chromedp.WaitVisible(chromedp.CSS(`#overview-cards .card`)))
	raw := regexp.MustCompile(`\d\.\d{3,} B/s`)
	eventually(t, 15*time.Second, func() bool {
		publish(3)
		cards := text(t, ctx, "#overview-cards")
		if raw.MatchString(cards) {
			t.Fatalf("a byte rate printed raw: %q", cards)
		}
		return regexp.MustCompile(`[1-9][\d.]* (B|KiB|MiB)/s`).MatchString(cards)
	})
	if c := text(t, ctx, "#js-cards"); !strings.Contains(strings.ToLower(c), "dead-lettered, ever") || !strings.Contains(c, "in dead-letter streams now") {
		t.Errorf("JetStream cards %q: the dead-letter counts are not labelled", c)
	}
}
