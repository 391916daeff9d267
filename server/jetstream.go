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
)

// startJetStream opens the streams under the store directory and starts
// serving the JetStream API through the core adapter.
func (s *Server) startJetStream() error {
	js, err := jetstream.New(jetstreamCore{s}, jetstream.Options{
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
		Limits:               s.opts.JetStreamLimits,
		Batch:                s.opts.JetStreamBatchLimits,
		AckFormatV2:          s.opts.JetStreamAckFormatV2,
	})
	if err != nil {
		return err
	}
	if err := js.Start(); err != nil {
		return err
	}
	s.js = js
	return nil
}
