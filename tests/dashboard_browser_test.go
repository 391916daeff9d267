package tests

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// dashboardScreenshot, when set, is where the browser test saves a
// screenshot of the dashboard with its data (docs/dashboard.png is made
// with -dashboard.screenshot=../docs/dashboard.png).
var dashboardScreenshot = flag.String("dashboard.screenshot", "", "save a PNG of the dashboard here")

// chromium finds the browser: skipped without one, unless
// REQUIRE_BROWSER_TESTS=1 (CI), where a missing browser fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("REQUIRE_BROWSER_TESTS") == "1" {
		t.Fatal("no Chromium (/usr/bin/chromium) and REQUIRE_BROWSER_TESTS=1: apt-get install chromium")
	}
	t.Skip("no Chromium; install Debian's chromium to run the dashboard's browser test")
	return ""
}

// browser starts a headless Chromium with the flags this machine's
// closed network needs, and extra ones, closed when the test ends.
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	opts = append(opts, extra...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		defer ccancel()
		_ = chromedp.Cancel(cctx)
		cancel()
		acancel()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// do runs steps with a deadline, failing the test with what.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func attr(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	if err != nil {
		t.Fatalf("attribute %s of %s: %v", name, sel, err)
	}
	return v.Value
}

// TestDashboardInBrowser drives the dashboard in headless Chromium: it
// lists a stream the test made, its lag chart follows publishes to the
// stream, a dead letter shows in the DLQ view with its headers, and its
// redrive button puts it back in its origin stream.
func TestDashboardInBrowser(t *testing.T) {
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
	if _, err := orders.CreateOrUpdateConsumer(jctx, jetstream.ConsumerConfig{Durable: "billing", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}

	// The streams view lists the stream.
	do(t, ctx, "streams view", chromedp.Navigate(base+"/#streams"),
		chromedp.WaitVisible(chromedp.CSS(`#streams-table tr[data-stream="ORDERS"]`)))

	// The lag chart follows publishes: the consumer reads nothing, so
	// its lag becomes what was published.
	lagLine := `#lag-chart polyline[data-series="billing"]`
	do(t, ctx, "consumers view", chromedp.Navigate(base+"/#consumers/ORDERS"),
		chromedp.WaitReady(chromedp.CSS(lagLine+`[data-last="0"]`)))
	before := attr(t, ctx, lagLine, "points")
	publish := func(n int) {
		for i := range n {
			if _, err := js.Publish(jctx, fmt.Sprintf("orders.%d", i), []byte(`{"total":42}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(7)
	do(t, ctx, "lag chart shows 7", chromedp.WaitReady(chromedp.CSS(lagLine+`[data-last="7"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#consumers-table tr[data-consumer="billing"] td.lag`)))
	if after := attr(t, ctx, lagLine, "points"); after == before {
		t.Fatalf("lag chart did not move: points %q", after)
	}
	if *dashboardScreenshot != "" {
		// More publishes, each held for a sample (every 5 s), draw a
		// line worth looking at.
		lag := 7
		for _, n := range []int{5, 9, 4} {
			publish(n)
			lag += n
			do(t, ctx, "more lag", chromedp.WaitReady(chromedp.CSS(lagLine+`[data-last="`+strconv.Itoa(lag)+`"]`)))
			pts := countPoints(attr(t, ctx, lagLine, "points"))
			eventually(t, 12*time.Second, func() bool { return countPoints(attr(t, ctx, lagLine, "points")) > pts })
		}
	}

	// A dead letter shows in the DLQ view, with its origin and reason.
	jobs, dlq := deadLetterJobs(t, js, nc, 1)
	row := `#dlq-messages tr.msg[data-seq="1"]`
	do(t, ctx, "dlq view", chromedp.Navigate(base+"/#dlq/DLQ"),
		chromedp.WaitVisible(chromedp.CSS(row+` button.redrive`)),
		chromedp.Click(chromedp.CSS(row+` button[data-action="toggle"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#dlq-messages tr.detail pre.payload`)))
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	text, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`#dlq-messages table.messages`)))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"JOBS", "jobs.0", "W", "terminated: bad input", "Bus-Dlq-Reason", "Bus-Dlq-Deliveries"} {
		if !strings.Contains(text, want) {
			t.Errorf("DLQ view lacks %q:\n%s", want, text)
		}
	}
	if *dashboardScreenshot != "" {
		// The DLQ view as it is now, then the consumers view, which
		// this test's publishes have drawn.
		shot(t, ctx, strings.TrimSuffix(*dashboardScreenshot, ".png")+"-dlq.png")
		do(t, ctx, "consumers view", chromedp.Navigate(base+"/#consumers/ORDERS"), chromedp.WaitReady(chromedp.CSS(lagLine)))
		shot(t, ctx, *dashboardScreenshot)
		do(t, ctx, "back to dlq", chromedp.Navigate(base+"/#dlq/DLQ"), chromedp.WaitVisible(chromedp.CSS(row+` button.redrive`)))
	}

	// Its redrive button puts it back where it came from.
	do(t, ctx, "redrive", chromedp.Click(chromedp.CSS(row+` button.redrive`)),
		chromedp.WaitNotPresent(chromedp.CSS(row)))
	var jobsMsgs, dlqMsgs uint64
	if !waitFor(5*time.Second, func() bool {
		ji, err1 := jobs.Info(jctx)
		di, err2 := dlq.Info(jctx)
		if err1 == nil && err2 == nil {
			jobsMsgs, dlqMsgs = ji.State.Msgs, di.State.Msgs
		}
		return jobsMsgs == 2 && dlqMsgs == 0
	}) {
		t.Fatalf("after the redrive JOBS has %d messages, DLQ %d; want 2 and 0", jobsMsgs, dlqMsgs)
	}
	m, err := jobs.GetMsg(jctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "jobs.0" || string(m.Data) != "0" || m.Header.Get("Bus-Redrive-Count") != "1" || m.Header.Get("Bus-Dlq-Reason") != "" {
		t.Fatalf("redriven message: %s %q %v", m.Subject, m.Data, m.Header)
	}
}

// countPoints counts the points of an SVG polyline.
func countPoints(points string) int {
	n := 0
	for _, c := range points {
		if c == ',' {
			n++
		}
	}
	return n
}

// shot saves the page as it is as a PNG.
func shot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardInBrowserLogsInToReadMessages: with authorization the
// DLQ view lists the dead-letter stream (counters are open) but shows,
// in place of its messages, why they need a login and how; logging in
// there shows them.
func TestDashboardInBrowserLogsInToReadMessages(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	users := []server.User{{Name: "admin", Password: "pw"}}
	s := startBus(t, server.Options{JetStream: true, HTTPPort: -1, Authorization: server.Authorization{Users: users}})
	base := "http://" + s.HTTPAddr().String()
	nc := connect(t, busURL(s), nats.UserInfo("admin", "pw"))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadLetterJobs(t, js, nc, 1)

	do(t, ctx, "dlq view without a login", chromedp.Navigate(base+"/#dlq/DLQ"),
		chromedp.WaitVisible(chromedp.CSS(`#dlq-list tr[data-stream="DLQ"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#dlq-messages .login-needed button[data-action="login"]`)))
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	text, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`#dlq-messages`)))
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"need a login", "authorization", "http_auth: true"} {
		if !strings.Contains(text, want) {
			t.Errorf("the DLQ view does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Bus-Dlq-Reason") || strings.Contains(text, "bad input") {
		t.Fatalf("the DLQ view shows a dead letter without a login:\n%s", text)
	}

	row := `#dlq-messages tr.msg[data-seq="1"]`
	do(t, ctx, "log in", chromedp.Click(chromedp.CSS(`#dlq-messages button[data-action="login"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#login-user`)),
		chromedp.SendKeys(chromedp.CSS(`#login-user`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`#login-pass`), "pw"),
		chromedp.Click(chromedp.CSS(`#modal-ok`)),
		chromedp.WaitVisible(chromedp.CSS(row+` button.redrive`)))
}
