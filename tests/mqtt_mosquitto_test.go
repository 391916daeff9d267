package tests

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// mosquittoClients returns the paths of Debian's mosquitto_pub and
// mosquitto_sub, skipping the test without them unless
// REQUIRE_MQTT_CLIENTS=1 (.ci/run installs them and sets it).
func mosquittoClients(t *testing.T) (pub, sub string) {
	t.Helper()
	pub, err1 := exec.LookPath("mosquitto_pub")
	sub, err2 := exec.LookPath("mosquitto_sub")
	if err1 != nil || err2 != nil {
		if os.Getenv("REQUIRE_MQTT_CLIENTS") == "1" {
			t.Fatalf("mosquitto_pub/mosquitto_sub not found (apt-get install mosquitto-clients): %v %v", err1, err2)
		}
		t.Skip("mosquitto-clients not installed")
	}
	return pub, sub
}

// TestMosquittoClientsWithNATS: Debian's mosquitto_sub receives what
// mosquitto_pub (QoS 0 and 1) and a NATS client publish, and a NATS
// subscriber receives mosquitto_pub's, with a user and password.
func TestMosquittoClientsWithNATS(t *testing.T) {
	pubBin, subBin := mosquittoClients(t)
	auth := server.Authorization{Users: []server.User{{Name: "device", Password: "s3cret"}, {Name: "app", Password: "app"}}}
	s, tg := startBusMQTT(t, server.Options{Authorization: auth})
	_, port, _ := net.SplitHostPort(s.MQTTAddr().String())
	common := []string{"-h", "127.0.0.1", "-p", port, "-u", "device", "-P", "s3cret", "-V", "mqttv311"}

	nc := connect(t, tg.nats, nats.UserInfo("app", "app"))
	natsSeen := make(chan string, 4)
	if _, err := nc.Subscribe("sensors.>", func(m *nats.Msg) { natsSeen <- m.Subject + " " + string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	before := s.Varz().Subscriptions

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	sub := exec.CommandContext(ctx, subBin, append(common, "-i", "mosq-sub", "-t", "sensors/#", "-v", "-C", "3", "-W", "15")...)
	sub.Stdout, sub.Stderr = &out, &out
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	// "sensors/#" is two subscriptions: sensors.> and sensors.
	eventually(t, 10*time.Second, func() bool { return s.Varz().Subscriptions >= before+2 })

	for i, qos := range []string{"0", "1"} {
		cmd := exec.CommandContext(ctx, pubBin, append(common, "-i", "mosq-pub", "-q", qos, "-t", "sensors/"+strconv.Itoa(i+1)+"/temp", "-m", "2"+qos+".5")...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_pub -q %s: %v: %s", qos, err, b)
		}
	}
	if err := nc.Publish("sensors", []byte("from-nats")); err != nil {
		t.Fatal(err)
	}
	if err := sub.Wait(); err != nil {
		t.Fatalf("mosquitto_sub: %v: %s", err, out.String())
	}
	want := "sensors/1/temp 20.5\nsensors/2/temp 21.5\nsensors from-nats\n"
	if out.String() != want {
		t.Errorf("mosquitto_sub printed %q, want %q", out.String(), want)
	}
	for _, w := range []string{"sensors.1.temp 20.5", "sensors.2.temp 21.5"} {
		if got := recv(natsSeen, 5*time.Second); got != w {
			t.Errorf("NATS subscriber got %q, want %q", got, w)
		}
	}
	bad := exec.CommandContext(ctx, pubBin, "-h", "127.0.0.1", "-p", port, "-u", "device", "-P", "wrong", "-t", "x", "-m", "y")
	if b, err := bad.CombinedOutput(); err == nil || !bytes.Contains(b, []byte("not authorised")) {
		t.Errorf("a wrong password: %v: %s", err, b)
	}
}

// TestMosquittoPersistentSession: mosquitto_sub with a persistent
// session (-c) at QoS 1 subscribes and leaves; what mosquitto_pub sends
// at QoS 1 meanwhile is stored, and the next mosquitto_sub with the
// same client id receives it without subscribing again.
func TestMosquittoPersistentSession(t *testing.T) {
	pubBin, subBin := mosquittoClients(t)
	s, _ := startBusMQTT(t, server.Options{JetStream: true, StoreDir: t.TempDir()})
	_, port, _ := net.SplitHostPort(s.MQTTAddr().String())
	common := []string{"-h", "127.0.0.1", "-p", port, "-V", "mqttv311", "-q", "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(bin string, args ...string) string {
		out, err := exec.CommandContext(ctx, bin, append(common, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", bin, args, err, out)
		}
		return string(out)
	}
	run(subBin, "-c", "-i", "kitchen", "-t", "cmd/#", "-E")
	run(pubBin, "-i", "app", "-t", "cmd/fan", "-m", "on")
	if out := run(subBin, "-c", "-i", "kitchen", "-t", "cmd/#", "-v", "-C", "1", "-W", "10"); out != "cmd/fan on\n" {
		t.Errorf("persistent mosquitto_sub got %q", out)
	}
}
