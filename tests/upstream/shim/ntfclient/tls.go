package ntf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/synadia-io/orbit.go/ntf-client/api"
)

// defaultSANs are the names a generated server certificate carries when
// the test names none.
var defaultSANs = []string{"localhost", "127.0.0.1", "::1"}

// mintTLS writes a fresh CA, a server certificate for sans and its key
// under dir, and returns their paths and what a client needs (with a
// client certificate when mutual).
func mintTLS(dir string, sans []string, mutual bool) (*tlsFiles, *api.TLSMaterial, error) {
	if len(sans) == 0 {
		sans = defaultSANs
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "bus upstream test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, caCert, err := sign(caTmpl, nil, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	serverTmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "bus"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, san := range sans {
		if ip := net.ParseIP(san); ip != nil {
			serverTmpl.IPAddresses = append(serverTmpl.IPAddresses, ip)
		} else {
			serverTmpl.DNSNames = append(serverTmpl.DNSNames, san)
		}
	}
	serverCert, serverKey, err := leaf(serverTmpl, caCert, caKey)
	if err != nil {
		return nil, nil, err
	}
	files := &tlsFiles{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "server-cert.pem"),
		KeyFile:  filepath.Join(dir, "server-key.pem"),
	}
	caPEM := pemBlock("CERTIFICATE", caDER)
	if err := errors.Join(
		os.WriteFile(files.CAFile, caPEM, 0o600),
		os.WriteFile(files.CertFile, serverCert, 0o600),
		os.WriteFile(files.KeyFile, serverKey, 0o600),
	); err != nil {
		return nil, nil, err
	}
	material := &api.TLSMaterial{CAPEM: string(caPEM)}
	if mutual {
		clientTmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "client"},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		cert, key, err := leaf(clientTmpl, caCert, caKey)
		if err != nil {
			return nil, nil, err
		}
		material.ClientCertPEM, material.ClientKeyPEM = string(cert), string(key)
	}
	return files, material, nil
}

// leaf signs a new key's certificate with the CA and returns both as PEM.
func leaf(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, _, err := sign(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", keyDER), nil
}

// sign fills in serial and validity and signs tmpl with signer (self-signed
// when parent is nil).
func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, nil, fmt.Errorf("sign %q: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// TLSConfig builds a client's tls.Config from an instance's generated
// material: its CA as the roots, and the client certificate for mutual
// TLS.
func TLSConfig(inst *Instance) (*tls.Config, error) {
	if inst == nil || inst.TLS == nil {
		return nil, fmt.Errorf("instance has no TLS material; was WithGeneratedTLS set on the create call?")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(inst.TLS.CAPEM)) {
		return nil, fmt.Errorf("could not load CA PEM into trust pool")
	}
	cfg := &tls.Config{RootCAs: pool}
	if inst.TLS.ClientCertPEM != "" {
		cert, err := tls.X509KeyPair([]byte(inst.TLS.ClientCertPEM), []byte(inst.TLS.ClientKeyPEM))
		if err != nil {
			return nil, fmt.Errorf("could not load client cert/key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
