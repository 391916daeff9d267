package tests

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNatsCLIEventsShowAccountConnections runs `nats events` as the
// system account's admin while a user of A connects and leaves, on bus
// and the reference: both show the connect and the disconnect of A's
// user.
func TestNatsCLIEventsShowAccountConnections(t *testing.T) {
	t.Parallel()
	bin := natsCLI(t)
	bus, ref := startAccountsSysPair(t)
	for side, url := range map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()} {
		seen := cliEvents(t, bin, url)
		for _, want := range []string{"client_connect", "client_disconnect"} {
			if !seen[want] {
				t.Errorf("%s: nats events showed no %s of A's user (saw %v)", side, want, seen)
			}
		}
	}
}

// cliEvents runs `nats events --json` and connects a1 until the CLI has
// shown a connect and a disconnect event of account A (or 20 seconds
// pass): the CLI's subscription is in place only some time after it
// starts. It returns the kinds of event seen.
func cliEvents(t *testing.T, bin, url string) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-s", url, "--no-context", "--user", "admin", "--password", accountsPass, "events", "--json")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range lines { // let the reader end before the process is reaped
		}
		_ = cmd.Wait()
	}()
	seen := map[string]bool{}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !seen["client_connect"] || !seen["client_disconnect"] {
		select {
		case line, ok := <-lines:
			if !ok {
				return seen
			}
			if !strings.Contains(line, `"acc": "A"`) && !strings.Contains(line, `"acc":"A"`) {
				continue
			}
			for _, kind := range []string{"client_connect", "client_disconnect"} {
				if strings.Contains(line, "io.nats.server.advisory.v1."+kind) {
					seen[kind] = true
				}
			}
		case <-tick.C:
			connectAs(t, url, "a1").Close()
		case <-ctx.Done():
			return seen
		}
	}
	return seen
}
