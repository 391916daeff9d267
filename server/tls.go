package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"
)

// loadTLS reads the certificate, key and CA files of t into the client
// port's configuration. t was validated.
func loadTLS(t TLSOptions) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("server: tls: load certificate: %w", err)
	}
	minVersion, _ := tlsVersion(t.MinVersion)
	suites, _ := cipherSuites(t.CipherSuites)
	curvePrefs, _ := curves(t.CurvePreferences)
	cfg := &tls.Config{
		Certificates:     []tls.Certificate{cert},
		MinVersion:       minVersion,
		CipherSuites:     suites,
		CurvePreferences: curvePrefs,
		ClientAuth:       tls.NoClientCert,
	}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("server: tls: read ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("server: tls: ca_file %q holds no PEM certificate", t.CAFile)
		}
		cfg.ClientCAs = pool
	}
	if t.verifying() {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// sameTLSFiles reports whether two loaded configurations hold the same
// certificate chain and client CAs: a reload that re-read the files
// found the contents it had (nil is a configuration not loaded yet).
func sameTLSFiles(a, b *tls.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	sameChain := slices.EqualFunc(a.Certificates, b.Certificates, func(x, y tls.Certificate) bool {
		return slices.EqualFunc(x.Certificate, y.Certificate, bytes.Equal)
	})
	return sameChain && (a.ClientCAs == nil) == (b.ClientCAs == nil) && (a.ClientCAs == nil || a.ClientCAs.Equal(b.ClientCAs))
}

// ReloadTLS reads the TLS files again (after a certificate rotation, on
// SIGHUP): new connections use them, connections already up keep theirs.
// On error the previous files stay in use.
func (s *Server) ReloadTLS() error {
	t := s.liveOpts().TLS // Reload may have named other files
	if !t.enabled() {
		return nil
	}
	cfg, err := loadTLS(t)
	if err != nil {
		return err
	}
	s.tlsConf.Store(cfg)
	s.log.Info("tls certificates reloaded", "cert_file", t.CertFile)
	return nil
}

// monitorTLS is the monitoring port's configuration: the client port's
// certificate, and no client certificates asked for.
func (s *Server) monitorTLS() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			cfg := s.tlsConf.Load().Clone()
			cfg.ClientAuth, cfg.ClientCAs = tls.NoClientCert, nil
			return cfg, nil
		},
	}
}

// serveTLS is the reader goroutine of a TLS connection: it does the
// handshake, sending INFO before it (or after, with HandshakeFirst), and
// then starts the writer and reads as any connection does. A handshake
// that fails or takes longer than the TLS timeout closes the socket.
func (c *conn) serveTLS(info string) {
	s := c.srv
	t := s.liveOpts().TLS // its timeout reloads; the rest needs a restart
	first := t.HandshakeFirst
	var sock net.Conn = c.raw
	if first && t.HandshakeFirstFallback > 0 {
		// Wait a moment for a TLS-first client; whatever it sends is
		// kept for the handshake. Silence means an upgrading client.
		var pre [1]byte
		_ = c.raw.SetReadDeadline(time.Now().Add(t.HandshakeFirstFallback))
		n, _ := c.raw.Read(pre[:])
		if n > 0 {
			sock = &replayConn{Conn: c.raw, pending: pre[:n]}
		} else {
			first = false
		}
	}
	_ = c.raw.SetDeadline(time.Now().Add(t.Timeout))
	if !first {
		if _, err := io.WriteString(c.raw, info); err != nil {
			c.tlsFailed(err)
			return
		}
	}
	tc := tls.Server(sock, s.tlsConf.Load())
	if err := tc.Handshake(); err != nil {
		c.tlsFailed(err)
		return
	}
	_ = c.raw.SetDeadline(time.Time{})
	c.nc = tc
	if state := tc.ConnectionState(); len(state.PeerCertificates) > 0 {
		c.peerCert = state.PeerCertificates[0]
	}
	if first {
		c.out.appendControl(info)
	}
	c.startAuth()
	c.resetPingTimer(s.firstPingDelay())
	c.out.signal()
	c.startWriter()
	c.readLoop()
}

// tlsFailed drops a connection whose handshake did not complete; its
// writer never started.
func (c *conn) tlsFailed(err error) {
	c.log.Warn("tls handshake failed", "err", err)
	c.close("TLS Handshake Error", false)
	c.srv.wg.Done() // for the writer
}

// replayConn is a connection whose first reads return bytes already read
// from it.
type replayConn struct {
	net.Conn
	pending []byte
}

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.Conn.Read(p)
}
