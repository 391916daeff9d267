package tests

import (
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// A will is published by the server on its client's behalf, so it needs
// the client's rights when it goes out: a client closed because a reload
// removed its user leaves no will behind (its rights at CONNECT allowed
// it).
func TestMQTTWillNeedsTheUsersRightsAtClose(t *testing.T) {
	opts := server.Options{StoreDir: t.TempDir(), Authorization: server.Authorization{Users: []server.User{
		{Name: "dev", Password: "pw"}, {Name: "keep", Password: "k"}}}}
	s, tg := startBusMQTT(t, opts)
	watcher := connect(t, busURL(s), nats.UserInfo("keep", "k"))
	got := make(chan string, 4)
	if _, err := watcher.Subscribe("will.dev", func(m *nats.Msg) { got <- string(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Flush(); err != nil {
		t.Fatal(err)
	}
	lost := make(chan struct{}, 1)
	mustPaho(t, pahoOptions(tg.mqtt, "dev-1").SetUsername("dev").SetPassword("pw").
		SetWill("will/dev", "gone", 0, false).
		SetConnectionLostHandler(func(paho.Client, error) { lost <- struct{}{} }))

	opts.Host, opts.MQTT = "127.0.0.1", server.MQTTOptions{Host: "127.0.0.1", Port: -1}
	opts.Authorization.Users = opts.Authorization.Users[1:]
	if err := s.Reload(opts); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the removed user's MQTT client is still connected")
	}
	// The will, if any, is routed before the connection leaves /connz;
	// a marker published after that comes after it.
	eventually(t, 5*time.Second, func() bool {
		cz, err := s.Connz(server.ConnzOptions{MQTTClient: "dev-1"})
		return err == nil && len(cz.Conns) == 0
	})
	if err := watcher.Publish("will.dev", []byte("marker")); err != nil {
		t.Fatal(err)
	}
	if first := <-got; first != "marker" {
		t.Fatalf("got %q first: the will of a user the reload removed went out", first)
	}
}
