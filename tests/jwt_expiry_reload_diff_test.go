package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
)

// TestJWTExpiryOutlivesReload checks, on bus and the reference alike,
// that a config reload (here one that changes the user's account JWT)
// keeps a connected user's JWT expiry armed: the connection is still
// closed when its user JWT expires, with the reference's error, and a
// user without an expiry stays.
func TestJWTExpiryOutlivesReload(t *testing.T) {
	t.Parallel()
	w := newJWTWorld(t)
	w.addAccount("A", nil)
	keeper, _ := w.user("A", nil, nil)
	opts := w.busOptions()
	opts.Host, opts.StoreDir = "127.0.0.1", t.TempDir()
	bus := startBus(t, opts)
	ref, path := startReferenceFile(t, w.referenceConfig(""))
	w.addAccount("A", func(ac *jwt.AccountClaims) { ac.Limits.Subs = 50 })
	reloads := map[string]func(t *testing.T){
		"bus": func(t *testing.T) {
			o := w.busOptions()
			o.Host, o.StoreDir = opts.Host, opts.StoreDir
			if err := bus.Reload(o); err != nil {
				t.Fatal(err)
			}
		},
		"reference": func(t *testing.T) {
			writeReferenceConfig(t, path, w.referenceConfig(""))
			if err := ref.Reload(); err != nil {
				t.Fatal(err)
			}
		},
	}
	urls := map[string]string{"bus": busURL(bus), "reference": ref.ClientURL()}
	outcomes := map[string][]string{}
	for _, side := range []string{"bus", "reference"} {
		t.Run(side, func(t *testing.T) {
			// Each side its own user, expiring 3s after it connects.
			expiring, _ := w.user("A", nil, func(uc *jwt.UserClaims) { uc.Expires = time.Now().Add(3 * time.Second).Unix() })
			errs := make(chan error, 4)
			closed := make(chan struct{})
			e := connect(t, urls[side], nats.UserCredentials(expiring), nats.NoReconnect(),
				nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }),
				nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
			k := connect(t, urls[side], nats.UserCredentials(keeper), nats.NoReconnect())
			e.Flush()
			reloads[side](t)
			steps := []string{"after the reload: " + fmt.Sprint(e.Flush())}
			select {
			case <-closed:
				steps = append(steps, "expiring user closed: "+firstErr(errs))
			case <-time.After(8 * time.Second):
				steps = append(steps, "expiring user still connected")
			}
			steps = append(steps, "keeper: "+fmt.Sprint(k.Flush()))
			t.Log(strings.Join(steps, "\n"))
			outcomes[side] = steps
		})
	}
	sameOutcomes(t, outcomes["reference"], outcomes["bus"])
}
