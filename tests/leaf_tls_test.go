package tests

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// A hub whose leaf port speaks TLS and verifies the leaf's certificate:
// bus dials tls://, checks the hub's certificate against the remote's
// ca_file and presents its own; a message then crosses both ways, as it
// does for a nats-server leaf with the same files.
func TestLeafOverTLSWithClientCertificates(t *testing.T) {
	ca := newTestCA(t, "leaf")
	hubCert, hubKey := ca.serverCert(t)
	leafCert, leafKey := ca.issue(t, "leaf", certSpec{cn: "bus leaf", client: true})
	hubTLS := func(o *natsserver.Options) {
		cfg, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: hubCert, KeyFile: hubKey, CaFile: ca.file, Verify: true, Timeout: 2})
		if err != nil {
			t.Fatal(err)
		}
		o.LeafNode.TLSConfig, o.LeafNode.TLSTimeout = cfg, 2
	}
	remote := func(hub *hubCluster) server.LeafRemote {
		return server.LeafRemote{
			URLs: []string{strings.Replace(hub.leafURLs()[0], "nats://", "tls://", 1)},
			TLS:  &server.LeafTLS{CAFile: ca.file, CertFile: leafCert, KeyFile: leafKey},
		}
	}
	refJoin := func(t *testing.T, hub *hubCluster, r server.LeafRemote) string {
		return startReferenceLeafWith(t, hub, r, func(o *natsserver.Options) {
			ro := o.LeafNode.Remotes[0]
			ro.TLS, ro.TLSTimeout = true, 2
			ro.TLSConfig = clientTLS(t, ca, leafCert, leafKey)
		}).ClientURL()
	}
	scenario := func(t *testing.T, join leafJoiner) []string {
		hub := startHubCluster(t, 1, false, hubTLS)
		leafURL := join(t, hub, remote(hub))
		onHub, onLeaf := connect(t, hub.clientURL(0)), connect(t, leafURL)
		hubSub, leafSub := subSync(t, onHub, "up", ""), subSync(t, onLeaf, "down", "")
		awaitRoute(t, onLeaf, hubSub, "up")
		awaitRoute(t, onHub, leafSub, "down")
		must(t, onLeaf.Publish("up", []byte("sealed")))
		must(t, onHub.Publish("down", []byte("sealed")))
		return append(drainLeaf(t, "hub", hubSub, 1), drainLeaf(t, "leaf", leafSub, 1)...)
	}
	sameOutcomes(t, scenario(t, refJoin), scenario(t, busLeaf))
}

// A leaf that does not trust the hub's certificate never joins: bus
// keeps dialing and says why.
func TestLeafRefusesAnUntrustedHub(t *testing.T) {
	ca, other := newTestCA(t, "hub"), newTestCA(t, "other")
	hubCert, hubKey := ca.serverCert(t)
	hub := startHubCluster(t, 1, false, func(o *natsserver.Options) {
		cfg, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: hubCert, KeyFile: hubKey, Timeout: 2})
		if err != nil {
			t.Fatal(err)
		}
		o.LeafNode.TLSConfig, o.LeafNode.TLSTimeout = cfg, 2
	})
	logs := &logCapture{}
	opts := server.Options{Logger: slog.New(logs)}
	opts.LeafNodes.Remotes = []server.LeafRemote{{
		URLs: []string{strings.Replace(hub.leafURLs()[0], "nats://", "tls://", 1)},
		TLS:  &server.LeafTLS{CAFile: other.file},
	}}
	startBus(t, opts)
	eventually(t, 10*time.Second, func() bool { return logs.has("certificate signed by unknown authority") })
	if n := hub.numLeafs(); n != 0 {
		t.Fatalf("%d leaf links with an untrusted hub", n)
	}
}

// logCapture is a slog handler that keeps each record as its message
// and attributes.
type logCapture struct {
	mu      sync.Mutex
	records []string
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logCapture) WithGroup(string) slog.Handler            { return l }
func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, line)
	return nil
}

// has reports whether a record so far contains text.
func (l *logCapture) has(text string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records {
		if strings.Contains(r, text) {
			return true
		}
	}
	return false
}
