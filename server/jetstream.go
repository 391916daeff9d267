package server

import (
	"log/slog"
	"path/filepath"

	"github.com/bus-dev/bus/server/jetstream"
)

// Jsz is the /jsz document (see jetstream.Jsz).
type Jsz = jetstream.Jsz

// JetStreamLimits and JetStreamBatchLimits are Options' bounds on what
// clients set (see jetstream.Limits and jetstream.BatchLimits).
type (
	JetStreamLimits      = jetstream.Limits
	JetStreamBatchLimits = jetstream.BatchLimits
	// JetStreamEncryption is encryption at rest (see jetstream.Encryption).
	JetStreamEncryption = jetstream.Encryption
)

// startJetStream opens the streams under the store directory and starts
// serving the JetStream API through the core adapter, for the global
// account and then every account with JetStream (accountjs.go).
func (s *Server) startJetStream() error {
	s.jsPool = jetstream.NewPool(s.opts.JetStreamMaxMemory, s.opts.JetStreamMaxStore)
	opts := s.serverJetStreamOptions(filepath.Join(s.opts.StoreDir, "jetstream"), s.log.With("component", "jetstream"))
	opts.MaxMemory, opts.MaxStorage = s.opts.JetStreamMaxMemory, s.opts.JetStreamMaxStore
	js, err := jetstream.New(jetstreamCore{s, s.global}, opts)
	if err != nil {
		return err
	}
	if err := js.Start(); err != nil {
		return err
	}
	s.js = js
	if err := s.startAccountsJetStream(s.opts.Accounts, s.accountSet()); err != nil {
		js.Shutdown()
		s.js = nil
		return err
	}
	return nil
}

// serverJetStreamOptions are the options every account's JetStream
// shares (the global one's and those of accountjs.go), in dir, so that
// none of them can miss a server-wide setting such as encryption.
func (s *Server) serverJetStreamOptions(dir string, log *slog.Logger) jetstream.Options {
	return jetstream.Options{
		Dir:        dir,
		ServerName: s.name,
		Version:    Version,
		Logger:     log,
		// The core filters deliveries itself (router.go); JetStream
		// checks consumer creation and gets.
		ReferenceStoredReads: s.opts.Authorization.ReferenceStoredReads,
		FS:                   s.opts.StoreFS,
		Domain:               s.opts.JetStreamDomain,
		DefaultSyncInterval:  s.opts.JetStreamSyncInterval,
		MaxIndexMemory:       s.opts.JetStreamIndexMemory,
		Limits:               s.opts.JetStreamLimits,
		Batch:                s.opts.JetStreamBatchLimits,
		Encryption:           s.opts.JetStreamEncryption,
		MaxPending:           s.opts.MaxPending,
		AckFormatV2:          s.opts.JetStreamAckFormatV2,
		Pool:                 s.jsPool,
	}
}
