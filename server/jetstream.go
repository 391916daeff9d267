package server

import (
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
	js, err := jetstream.New(jetstreamCore{s, s.global}, jetstream.Options{
		Dir:        filepath.Join(s.opts.StoreDir, "jetstream"),
		ServerName: s.name,
		Logger:     s.log.With("component", "jetstream"),
		// The core filters deliveries itself (router.go); JetStream
		// checks consumer creation and gets.
		ReferenceStoredReads: s.opts.Authorization.ReferenceStoredReads,
		FS:                   s.opts.StoreFS,
		Domain:               s.opts.JetStreamDomain,
		MaxMemory:            s.opts.JetStreamMaxMemory,
		MaxStorage:           s.opts.JetStreamMaxStore,
		DefaultSyncInterval:  s.opts.JetStreamSyncInterval,
		MaxIndexMemory:       s.opts.JetStreamIndexMemory,
		Limits:               s.opts.JetStreamLimits,
		Batch:                s.opts.JetStreamBatchLimits,
		Encryption:           s.opts.JetStreamEncryption,
	})
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
