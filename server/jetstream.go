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
	dir := filepath.Join(s.opts.StoreDir, "jetstream")
	// One file cache and one index cache for every account's JetStream,
	// so their bounds are the server's, not one per account; the file
	// cache's lock on the global store's LOCK keeps other processes out
	// of every account's store.
	caches, err := jetstream.NewCaches(jetstream.CachesOptions{Dir: dir,
		MaxOpenFiles: s.opts.JetStreamMaxOpenFiles, MaxIndexMemory: s.opts.JetStreamIndexMemory})
	if err != nil {
		return err
	}
	s.jsCaches = caches
	opts := s.serverJetStreamOptions(dir, s.log.With("component", "jetstream"))
	opts.MaxMemory, opts.MaxStorage = s.opts.JetStreamMaxMemory, s.opts.JetStreamMaxStore
	js, err := jetstream.New(jetstreamCore{s, s.global}, opts)
	if err != nil {
		s.closeJetStreamCaches()
		return err
	}
	if err := js.Start(); err != nil {
		s.closeJetStreamCaches()
		return err
	}
	s.js = js
	if err := s.startAccountsJetStream(s.opts.Accounts, s.accountSet()); err != nil {
		js.Shutdown()
		s.js = nil
		s.closeJetStreamCaches()
		return err
	}
	return nil
}

// closeJetStreamCaches closes the caches every account's JetStream
// shares, once none of them runs.
func (s *Server) closeJetStreamCaches() {
	if s.jsCaches != nil {
		if err := s.jsCaches.Close(); err != nil {
			s.log.Error("jetstream: release the store lock", "err", err)
		}
		s.jsCaches = nil
	}
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
		Caches:               s.jsCaches,
		Limits:               s.opts.JetStreamLimits,
		Batch:                s.opts.JetStreamBatchLimits,
		Encryption:           s.opts.JetStreamEncryption,
		MaxPending:           s.opts.MaxPending,
		AckFormatV2:          s.opts.JetStreamAckFormatV2,
		Pool:                 s.jsPool,
	}
}
