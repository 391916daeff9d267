package tests

import (
	"fmt"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// BenchmarkSecuredPubSub is BenchmarkPubSub with security on, for bus and
// the embedded reference side by side: plain, a user with permissions
// (every publish and delivery checked), TLS, and both:
//
//	go test ./tests -run '^$' -bench SecuredPubSub -benchtime 200000x
func BenchmarkSecuredPubSub(b *testing.B) {
	ca := newTestCA(b, "bench")
	cert, key := ca.serverCert(b)
	perms := &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"bench.>"}, Deny: []string{"bench.secret"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"bench.>", "_INBOX.>"}, Deny: []string{"bench.secret"}},
	}
	auth := server.Authorization{Users: []server.User{{Name: "u", Password: "p", Permissions: perms}}}
	tlsOpts := server.TLSOptions{CertFile: cert, KeyFile: key}
	for _, mode := range []struct {
		name  string
		auth  bool
		tls   bool
		extra []nats.Option
	}{
		{name: "plain"},
		{name: "auth+perms", auth: true},
		{name: "tls", tls: true},
		{name: "tls+auth+perms", auth: true, tls: true},
	} {
		var opts []nats.Option
		busOpts := server.Options{Host: "127.0.0.1", StoreDir: b.TempDir()}
		ro := &natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
		scheme := "nats://"
		if mode.auth {
			busOpts.Authorization = auth
			ro = refOptions(auth)
			opts = append(opts, nats.UserInfo("u", "p"))
		}
		if mode.tls {
			busOpts.TLS = tlsOpts
			cfg, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{CertFile: cert, KeyFile: key, Timeout: 2})
			if err != nil {
				b.Fatal(err)
			}
			ro.TLS, ro.TLSConfig, ro.TLSTimeout = true, cfg, 2
			opts = append(opts, nats.RootCAs(ca.file))
			scheme = "tls://"
		}
		s, err := server.New(busOpts)
		if err != nil || s.Start() != nil {
			b.Fatalf("start bus: %v", err)
		}
		b.Cleanup(func() { shutdown(b, s) })
		ns := startReferenceServer(b, ro)
		for _, srv := range []struct{ name, url string }{
			{"nats-server", scheme + refAddr(ns)},
			{"bus", scheme + s.Addr().String()},
		} {
			b.Run(fmt.Sprintf("%s/server=%s/size=128", mode.name, srv.name), func(b *testing.B) {
				benchPubSub(b, srv.url, 128, opts...)
			})
		}
	}
}

// benchPubSub sends b.N messages of size bytes from one connection to a
// subscriber on another.
func benchPubSub(b *testing.B, url string, size int, opts ...nats.Option) {
	pub, err := nats.Connect(url, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	sub, err := nats.Connect(url, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Close()
	done := make(chan struct{})
	n := 0
	s, _ := sub.Subscribe("bench.*", func(*nats.Msg) {
		if n++; n == b.N {
			close(done)
		}
	})
	_ = s.SetPendingLimits(-1, -1)
	_ = sub.Flush()
	payload := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = pub.Publish("bench.x", payload)
	}
	_ = pub.Flush()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatalf("received %d of %d", n, b.N)
	}
}
