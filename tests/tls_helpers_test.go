package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/bus-dev/bus/server"
)

// testCA is a certificate authority made for one test; nothing with a
// private key is ever committed.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // PEM of cert
	dir  string
}

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	dir := t.TempDir()
	ca := &testCA{cert: cert, key: key, dir: dir, file: filepath.Join(dir, name+"-ca.pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// certSpec says what a leaf certificate names.
type certSpec struct {
	cn     string
	emails []string
	dns    []string
	ips    []net.IP
	uris   []string
	client bool // for client authentication rather than a server
}

// issue makes a leaf certificate and key, returning their files.
func (ca *testCA) issue(t testing.TB, name string, spec certSpec) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	usage := x509.ExtKeyUsageServerAuth
	if spec.client {
		usage = x509.ExtKeyUsageClientAuth
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        pkix.Name{CommonName: spec.cn, Organization: []string{"bus tests"}},
		NotBefore:      time.Now().Add(-time.Hour),
		NotAfter:       time.Now().Add(time.Hour),
		KeyUsage:       x509.KeyUsageDigitalSignature,
		ExtKeyUsage:    []x509.ExtKeyUsage{usage},
		EmailAddresses: spec.emails,
		DNSNames:       spec.dns,
		IPAddresses:    spec.ips,
	}
	for _, u := range spec.uris {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, parsed)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// serverCert issues the loopback server certificate.
func (ca *testCA) serverCert(t testing.TB) (certFile, keyFile string) {
	return ca.issue(t, "server", certSpec{cn: "bus test server", dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}})
}

// tlsPair is bus and the reference with the same tls block.
type tlsPair struct {
	bus    *server.Server
	ref    *natsserver.Server
	busURL string
	refURL string
}

func startTLSPair(t *testing.T, tlsOpts server.TLSOptions, auth server.Authorization) tlsPair {
	t.Helper()
	bus := startBus(t, server.Options{TLS: tlsOpts, Authorization: auth})
	ro := refOptions(auth)
	cfg, err := natsserver.GenTLSConfig(&natsserver.TLSConfigOpts{
		CertFile: tlsOpts.CertFile, KeyFile: tlsOpts.KeyFile, CaFile: tlsOpts.CAFile,
		Verify: tlsOpts.Verify || tlsOpts.VerifyAndMap, Map: tlsOpts.VerifyAndMap,
		Timeout: tlsOpts.Timeout.Seconds(), HandshakeFirst: tlsOpts.HandshakeFirst, FallbackDelay: tlsOpts.HandshakeFirstFallback,
	})
	if err != nil {
		t.Fatal(err)
	}
	ro.TLS, ro.TLSConfig = true, cfg
	ro.TLSVerify, ro.TLSMap = tlsOpts.Verify || tlsOpts.VerifyAndMap, tlsOpts.VerifyAndMap
	ro.TLSTimeout = tlsOpts.Timeout.Seconds()
	if ro.TLSTimeout == 0 {
		ro.TLSTimeout = 2
	}
	ro.TLSHandshakeFirst = tlsOpts.HandshakeFirst
	ro.TLSHandshakeFirstFallback = tlsOpts.HandshakeFirstFallback
	ns := startReferenceServer(t, ro)
	return tlsPair{bus: bus, ref: ns, busURL: "tls://" + bus.Addr().String(), refURL: "tls://" + refAddr(ns)}
}

// clientTLS is a client configuration trusting ca, with an optional
// client certificate.
func clientTLS(t testing.TB, ca *testCA, certFile, keyFile string) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	pemBytes, err := os.ReadFile(ca.file)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(pemBytes)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}
