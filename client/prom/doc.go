// Package prom reports a client.Worker's metrics to Prometheus. It lives
// apart from package client so that programs without Prometheus do not
// link it.
//
// Every metric carries the labels stream and consumer:
//
//	bus_client_processed_total          counter: handler returned nil, message acked
//	bus_client_failed_total             counter: handler returned an error or panicked
//	bus_client_retried_total            counter: message NAKed with a back-off
//	bus_client_dead_lettered_total      counter, also labelled reason: given up on
//	bus_client_handler_seconds          histogram: handler latency, any outcome
//	bus_client_retry_delay_seconds      histogram: the back-off chosen per retry
package prom
