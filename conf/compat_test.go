package conf

import (
	"testing"
	"time"
)

// Keys that nats-server accepts for clusters and lame-duck mode load
// rather than fail as unknown, so that its configs carry over (issue 9).
func TestNatsServerClusterKeysAreAccepted(t *testing.T) {
	t.Parallel()
	got, err := Load(writeConfig(t, "bus.yaml", `
client_advertise: "nats.example.com:4222"
no_advertise: true
connect_error_reports: 10
reconnect_error_reports: 5
lame_duck_duration: 30s
lame_duck_grace_period: 5s
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.ClientAdvertise, want.NoAdvertise = "nats.example.com:4222", true
	want.ConnectErrorReports, want.ReconnectErrorReports = 10, 5
	want.LameDuckDuration, want.LameDuckGracePeriod = 30*time.Second, 5*time.Second
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
