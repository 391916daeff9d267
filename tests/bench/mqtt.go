package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// The MQTT scenarios: pub→sub through each server's MQTT listener with
// Eclipse Paho (paho.mqtt.golang, in process), at QoS 0 and QoS 1, and
// the memory of idle MQTT connections. Besides nats-server's MQTT they
// run on mosquitto, the broker most MQTT users know, when it is
// installed (Debian's mosquitto package); mqttTable compares bus with
// both.

// mosquittoPath finds the mosquitto binary: on PATH, or where Debian
// installs it (/usr/sbin is not on every user's PATH).
func mosquittoPath() (string, bool) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, true
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto", true
	}
	return "", false
}

// mosquittoFlavor runs mosquitto with the config mqttOnlyConfig writes:
// its defaults (no persistence, so QoS 1 is acknowledged from memory,
// never fsynced) except that queued and in-flight QoS 1 messages per
// client are not capped below what nats-server and bus allow (its
// default of 1,000 queued messages drops the rest of a fast publisher's).
func mosquittoFlavor(path string) flavor {
	return flavor{name: "mosquitto", mqttOnly: true, argv: func(port, _ int, dir string, _ bool) []string {
		return []string{path, "-c", filepath.Join(dir, "mosquitto.conf")}
	}}
}

// mqttOnlyConfig is the config of an MQTT-only broker on port.
func mqttOnlyConfig(port int) string {
	return fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\nmax_inflight_messages 1024\n", port)
}

// startMQTTOnly starts an MQTT-only broker (mosquitto) on a free port
// and returns once it answers an MQTT CONNECT.
func startMQTTOnly(ctx context.Context, f flavor, dir string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(mqttOnlyConfig(port)), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	s, err := launch(f, f.argv(port, 0, dir, false), logPath, logFile)
	if err != nil {
		return nil, err
	}
	s.mqttAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ready, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		rc, err := dialMQTT(ready, s.mqttAddr)
		if err == nil {
			rc.close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited: %v\n%s", f.name, s.waitErr, s.logTail())
		case <-ready.Done():
			_ = s.stop()
			return nil, fmt.Errorf("%s not ready: %w (last: %v)\n%s", f.name, ready.Err(), err, s.logTail())
		case <-time.After(pollEvery):
		}
	}
}

// idleClientIDs numbers the raw MQTT connections: each needs its own
// client id, or the next one would take its session over.
var idleClientIDs atomic.Int64

// dialMQTT opens an MQTT 3.1.1 connection with a clean session and no
// keepalive, and returns once the server has accepted it (CONNACK 0).
func dialMQTT(ctx context.Context, addr string) (*rawConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	id := "bench-idle-" + strconv.FormatInt(idleClientIDs.Add(1), 10)
	body := append([]byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 0, 0, byte(len(id))}, id...)
	pkt := append([]byte{0x10, byte(len(body))}, body...)
	var ack [4]byte
	if _, err = c.Write(pkt); err == nil {
		_, err = io.ReadFull(c, ack[:])
	}
	if err == nil && (ack[0] != 0x20 || ack[1] != 2 || ack[3] != 0) {
		err = fmt.Errorf("CONNACK % x", ack)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return &rawConn{c: c}, nil
}

// mqttPubSub is one Paho subscriber and one Paho publisher on one topic
// at one QoS, both with clean sessions.
type mqttPubSub struct {
	n, size int
	qos     byte
}

// mqttWindow bounds a QoS 1 publisher's unacknowledged publishes: Paho
// has 65,535 packet ids and refuses a publish when none is free.
const mqttWindow = 1024

func (m mqttPubSub) run(ctx context.Context, e *env) ([]float64, error) {
	if e.srv.mqttAddr == "" {
		return nil, errors.New("no MQTT listener")
	}
	e.note(fmt.Sprintf("(in process) paho.mqtt.golang, clean sessions: one subscriber and one publisher on bench/mqtt at QoS %d, %d messages of %d B (QoS 1: at most %d unacknowledged)",
		m.qos, m.n, m.size, mqttWindow))
	connect := func(id string) (paho.Client, error) {
		o := paho.NewClientOptions().AddBroker("tcp://" + e.srv.mqttAddr).SetClientID(id).
			SetCleanSession(true).SetAutoReconnect(false).SetConnectRetry(false).
			SetConnectTimeout(10 * time.Second).SetKeepAlive(60 * time.Second)
		c := paho.NewClient(o)
		if err := waitToken(ctx, c.Connect()); err != nil {
			return nil, fmt.Errorf("connect %s: %w", id, err)
		}
		return c, nil
	}
	sub, err := connect("bench-sub")
	if err != nil {
		return nil, err
	}
	defer sub.Disconnect(100)
	var got atomic.Int64 // Paho's router goroutine counts, this one reads
	done := make(chan struct{})
	if err := waitToken(ctx, sub.Subscribe("bench/mqtt", m.qos, func(paho.Client, paho.Message) {
		if got.Add(1) == int64(m.n) {
			close(done)
		}
	})); err != nil {
		return nil, fmt.Errorf("subscribe: %w", err)
	}
	pub, err := connect("bench-pub")
	if err != nil {
		return nil, err
	}
	defer pub.Disconnect(100)
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	msg := make([]byte, m.size)
	var window []paho.Token
	start := time.Now()
	for range m.n {
		if len(window) == mqttWindow {
			if err := waitToken(ctx, window[0]); err != nil {
				return nil, fmt.Errorf("publish: %w", err)
			}
			window = window[1:]
		}
		t := pub.Publish("bench/mqtt", m.qos, false, msg)
		if m.qos > 0 {
			window = append(window, t)
		}
	}
	for _, t := range window {
		if err := waitToken(ctx, t); err != nil {
			return nil, fmt.Errorf("publish: %w", err)
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("subscriber got %d of %d messages: %w", got.Load(), m.n, ctx.Err())
	}
	return []float64{float64(m.n) / time.Since(start).Seconds()}, nil
}

// waitToken waits for a Paho token within ctx.
func waitToken(ctx context.Context, t paho.Token) error {
	select {
	case <-t.Done():
		return t.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}
