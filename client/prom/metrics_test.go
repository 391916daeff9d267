package prom_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/bus-dev/bus/client"
	"github.com/bus-dev/bus/client/prom"
)

func TestMetricsCountEachOutcome(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	m, err := prom.New(prom.Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	l := client.Labels{Stream: "ORDERS", Consumer: "charge"}
	m.Processed(l, 20*time.Millisecond)
	m.Processed(l, 30*time.Millisecond)
	m.Failed(l, time.Millisecond)
	m.Retried(l, time.Second)
	m.DeadLettered(l, "max_deliveries")

	want := `
# HELP bus_client_dead_lettered_total Messages given up on, by reason.
# TYPE bus_client_dead_lettered_total counter
bus_client_dead_lettered_total{consumer="charge",reason="max_deliveries",stream="ORDERS"} 1
# HELP bus_client_failed_total Handler runs that returned an error or panicked.
# TYPE bus_client_failed_total counter
bus_client_failed_total{consumer="charge",stream="ORDERS"} 1
# HELP bus_client_processed_total Messages whose handler returned nil and that were acked.
# TYPE bus_client_processed_total counter
bus_client_processed_total{consumer="charge",stream="ORDERS"} 2
# HELP bus_client_retried_total Messages NAKed to be retried after a back-off.
# TYPE bus_client_retried_total counter
bus_client_retried_total{consumer="charge",stream="ORDERS"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"bus_client_processed_total", "bus_client_failed_total", "bus_client_retried_total", "bus_client_dead_lettered_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(reg, "bus_client_handler_seconds"); n != 1 {
		t.Fatalf("latency series %d, want 1", n)
	}
}

func TestNewNeedsRegisterer(t *testing.T) {
	t.Parallel()
	if _, err := prom.New(prom.Options{}); !errors.Is(err, client.ErrBadConfig) {
		t.Fatalf("got %v, want ErrBadConfig", err)
	}
	reg := prometheus.NewRegistry()
	if _, err := prom.New(prom.Options{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := prom.New(prom.Options{Registerer: reg}); err == nil {
		t.Fatal("registering twice succeeded")
	}
}
