package prom_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bus-dev/bus/client"
	"github.com/bus-dev/bus/client/prom"
)

// A worker reports to Prometheus through WorkerConfig.Metrics.
func ExampleNew() {
	m, err := prom.New(prom.Options{Registerer: prometheus.NewRegistry()})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := client.WorkerConfig{Stream: "ORDERS", Consumer: "charge", Metrics: m}
	fmt.Println(cfg.Metrics != nil)
	// Output: true
}
