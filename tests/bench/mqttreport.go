package main

import (
	"fmt"
	"strings"
)

// mqttTable compares bus with nats-server's MQTT and with mosquitto on
// the MQTT scenarios, throughput and server CPU per message side by
// side; "" when no MQTT scenario ran. Without mosquitto installed its
// columns say so.
func mqttTable(results []result, flavors []flavor) string {
	third := -1
	for i, f := range flavors {
		if f.mqttOnly {
			third = i
		}
	}
	cells := [][]string{{"Scenario", "Unit", "Better", "nats-server", "bus", "mosquitto", "bus/nats-server", "bus/mosquitto",
		"CPU s/1M msgs nats-server", "CPU s/1M msgs bus", "CPU s/1M msgs mosquitto", "CPU bus/mosquitto"}}
	for _, res := range results {
		if !res.sc.mqtt {
			continue
		}
		var mosq series
		if third >= 0 {
			mosq = res.by[third]
		} else {
			mosq.na = errNotApplicable.Error() + ": mosquitto not installed"
		}
		refCost, busCost, mosqCost := summarizeCost(res.sc, res.by[0]), summarizeCost(res.sc, res.by[1]), summarizeCost(res.sc, mosq)
		for m, met := range res.sc.metrics {
			better := "higher"
			if met.lowerIsBetter {
				better = "lower"
			}
			ref, bus, mq := summarize(res.by[0], m), summarize(res.by[1], m), summarize(mosq, m)
			refCell, _ := cell(res.by[0], ref, met.unit)
			busCell, _ := cell(res.by[1], bus, met.unit)
			mqCell, _ := cell(mosq, mq, met.unit)
			line := []string{strings.TrimSpace(res.sc.name + " " + met.label), met.unit, better,
				refCell, busCell, mqCell, ratioCell(ref, bus), ratioCell(mq, bus)}
			if m == 0 && res.sc.msgs > 0 {
				line = append(line, cpuCell(refCost), cpuCell(busCost), cpuCell(mosqCost), ratioCell(mosqCost.cpu, busCost.cpu))
			} else {
				line = append(line, "–", "–", "–", "–")
			}
			cells = append(cells, line)
		}
	}
	if len(cells) == 1 {
		return ""
	}
	return renderTable(cells, 3)
}

// mqttHowTo is the paragraph above mqttTable in docs/benchmarks.md.
func mqttHowTo() string {
	return fmt.Sprintf("The MQTT scenarios run on three brokers: nats-server and bus with an `mqtt` listener (and JetStream,\n"+
		"which both need for QoS 1), and mosquitto (Debian's package) with the config below: its defaults, which keep\n"+
		"QoS 1 messages in memory and never fsync, with no cap on queued messages. bus and nats-server store every QoS 1\n"+
		"message in the `$MQTT_msgs` stream before the PUBACK; bus fsyncs it first. The ratios are bus over each.\n\n"+
		"```\n%s```\n", strings.Replace(mqttOnlyConfig(0), "listener 0 ", "listener $PORT ", 1))
}
