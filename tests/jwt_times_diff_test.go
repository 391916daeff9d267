package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// TestJWTTimesEndWhileConnected checks that a connection is closed, with
// the reference's error, when the user JWT's times range it connected in
// ends (in the JWT's times_location), and that a range not yet over
// leaves it open.
func TestJWTTimesEndWhileConnected(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	p := startJWTPair(t, w)
	within := func(from, to time.Duration) func(*jwt.UserClaims) {
		return func(uc *jwt.UserClaims) {
			now := time.Now().In(time.FixedZone("", 0))
			uc.Locale = "Asia/Tokyo"
			tokyo, err := time.LoadLocation(uc.Locale)
			if err != nil {
				t.Fatal(err)
			}
			uc.Times = []jwt.TimeRange{{
				Start: now.Add(from).In(tokyo).Format(time.TimeOnly),
				End:   now.Add(to).In(tokyo).Format(time.TimeOnly),
			}}
		}
	}
	bothSides(t, busURL(p.bus), p.refURL, func(t *testing.T, url string) []string {
		// Ends in one to two seconds (times have whole seconds).
		ending, _ := w.user("A", nil, within(-time.Hour, 2*time.Second))
		lasting, _ := w.user("A", nil, within(-time.Hour, time.Hour))
		stays := connect(t, url, nats.UserCredentials(lasting), nats.NoReconnect())
		errs := make(chan error, 4)
		closed := make(chan struct{})
		connect(t, url, nats.UserCredentials(ending), nats.NoReconnect(),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			return []string{"still connected"}
		}
		out := []string{"lasting: " + stays.Status().String()}
		select {
		case err := <-errs:
			return append(out, "closed: "+strings.ToLower(err.Error()))
		case <-time.After(2 * time.Second):
			return append(out, "closed without error")
		}
	})
}
