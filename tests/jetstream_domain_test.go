package tests

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// domainScenario reaches JetStream through its domain, as nats.go's
// WithDomain does, and looks at what names it.
func domainScenario(t *testing.T, url string) []string {
	t.Helper()
	nc := connect(t, url)
	js, err := jetstream.NewWithDomain(nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []string
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "D", Subjects: []string{"d.>"}})
	out = append(out, fmt.Sprintf("create through the domain: %v", err))
	ack, err := js.Publish(ctx, "d.1", []byte("x"))
	out = append(out, fmt.Sprintf("ack: stream=%s seq=%d domain=%s err=%v", ack.Stream, ack.Sequence, ack.Domain, err))
	info, err := js.AccountInfo(ctx)
	out = append(out, fmt.Sprintf("account info domain=%s err=%v", info.Domain, err))
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b.Messages() {
		_ = m.Ack()
		n++
	}
	out = append(out, fmt.Sprintf("fetch through the domain: %d", n))
	_, err = jetstream.NewWithDomain(nc, "elsewhere")
	out = append(out, fmt.Sprintf("other domain handle: %v", err))
	other, _ := jetstream.NewWithDomain(nc, "elsewhere")
	_, err = other.AccountInfo(ctx)
	out = append(out, fmt.Sprintf("other domain: %v", errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, nats.ErrNoResponders)))
	return out
}

func TestJetStreamDomainMatchesReference(t *testing.T) {
	t.Parallel()
	ref := startReferenceDomain(t, "hub")
	want := domainScenario(t, "nats://"+ref.Addr().String())
	s := startBus(t, server.Options{JetStream: true, JetStreamDomain: "hub"})
	got := domainScenario(t, busURL(s))
	sameOutcomes(t, want, got)
	// The INFO line names the domain, as the reference's does.
	for name, addr := range map[string]string{"bus": s.Addr().String(), "reference": ref.Addr().String()} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		_ = c.Close()
		if err != nil || !strings.Contains(line, `"domain":"hub"`) {
			t.Errorf("%s INFO %q does not name the domain", name, line)
		}
	}
}

// TestJetStreamStorageLimits: a stream whose max_bytes does not fit is
// refused, and past the server's file-store limit publishes are refused
// until messages are removed.
func TestJetStreamStorageLimits(t *testing.T) {
	t.Parallel()
	s := startBus(t, server.Options{JetStream: true, JetStreamMaxStore: 64 << 10})
	nc := connect(t, busURL(s))
	js, _ := jetstream.New(nc)
	ctx := ctxT(t)
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big"}, MaxBytes: 1 << 20})
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10047 {
		t.Fatalf("a stream bigger than the store: %v", err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "L", Subjects: []string{"l"}})
	if err != nil {
		t.Fatal(err)
	}
	info, err := js.AccountInfo(ctx)
	if err != nil || info.Limits.MaxStore != 64<<10 {
		t.Fatalf("account limits %+v %v", info.Limits, err)
	}
	payload := make([]byte, 4096)
	refused := false
	for i := 0; i < 200 && !refused; i++ {
		_, err := js.Publish(ctx, "l", payload)
		switch {
		case errors.As(err, &apiErr) && apiErr.ErrorCode == 10002:
			refused = true
		case err != nil:
			t.Fatal(err)
		default:
			time.Sleep(10 * time.Millisecond) // the limit is looked at once a second
		}
	}
	if !refused {
		t.Fatal("publishes past the file-store limit were all stored")
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool {
		_, err := js.Publish(ctx, "l", payload)
		return err == nil
	})
}
