package server

import (
	"fmt"
	"path/filepath"

	"github.com/bus-dev/bus/server/jetstream"
)

// AccountJetStream is an account's jetstream key (nats-server's
// accounts { A { jetstream {...} } }): the account has a JetStream of its
// own, with its own streams, consumers, KV buckets and object stores
// (two accounts' streams of one name are two streams) and these limits;
// 0 leaves one unset.
type AccountJetStream struct {
	// MaxMemory and MaxStore bound the bytes of the account's memory and
	// file streams together (10028, 10047 at create; 10002 on publish).
	MaxMemory, MaxStore int64
	// MaxStreams, MaxConsumers (per stream) and MaxAckPending are
	// jetstream.AccountLimits.
	MaxStreams, MaxConsumers, MaxAckPending int
	// MemoryMaxStreamBytes, StoreMaxStreamBytes and MaxBytesRequired
	// bound one stream's max_bytes (jetstream.AccountLimits).
	MemoryMaxStreamBytes, StoreMaxStreamBytes int64
	MaxBytesRequired                          bool
}

// limits are the account limits jetstream.Service enforces besides the
// storage ones.
func (js *AccountJetStream) limits() jetstream.AccountLimits {
	return jetstream.AccountLimits{MaxStreams: js.MaxStreams, MaxConsumers: js.MaxConsumers, MaxAckPending: js.MaxAckPending,
		MemoryMaxStreamBytes: js.MemoryMaxStreamBytes, StoreMaxStreamBytes: js.StoreMaxStreamBytes, MaxBytesRequired: js.MaxBytesRequired}
}

// accountsDir holds the stores of the accounts of the accounts block,
// one directory each (named by the account) beside the global account's
// "jetstream", whose layout is unchanged: a stream can never be taken for
// an account's store, nor the other way round.
const accountsDir = "accounts"

// accountStoreDir is the store directory of account name's JetStream.
func (s *Server) accountStoreDir(name string) string {
	return filepath.Join(s.opts.StoreDir, accountsDir, name, "jetstream")
}

// validateJetStream checks an account's jetstream: the server must have
// JetStream, and the name must be safe as a directory name.
func (a Account) validateJetStream(serverJetStream bool) error {
	js := a.JetStream
	switch {
	case js == nil:
		return nil
	case !serverJetStream:
		return fmt.Errorf("server: account %q: jetstream needs JetStream on the server", a.Name)
	case !safeDirName(a.Name):
		// The name is its store's directory.
		return fmt.Errorf("server: account %q: an account with jetstream needs a name fit for a directory (no '.', '*', '>', '/', '\\', ':', spaces or control characters)", a.Name)
	case js.MaxMemory < 0 || js.MaxStore < 0 || js.MaxStreams < 0 || js.MaxConsumers < 0 || js.MaxAckPending < 0 ||
		js.MemoryMaxStreamBytes < 0 || js.StoreMaxStreamBytes < 0:
		return fmt.Errorf("server: account %q: jetstream limits must not be negative (0 for none)", a.Name)
	}
	return nil
}

// jetStreamReservationsFit checks that the accounts' JetStream limits
// together fit in the server's max_memory_store and max_file_store, as
// the reference checks them before it enables an account (it refuses to
// start otherwise), with its words.
func jetStreamReservationsFit(o Options) error {
	var memory, store int64
	for _, a := range o.Accounts {
		if a.JetStream != nil {
			memory += a.JetStream.MaxMemory
			store += a.JetStream.MaxStore
		}
	}
	switch {
	case o.JetStreamMaxMemory > 0 && memory > o.JetStreamMaxMemory:
		return fmt.Errorf("server: accounts: their jetstream max_memory (%d bytes together) exceed jetstream.max_memory_store (%d): insufficient memory resources available", memory, o.JetStreamMaxMemory)
	case o.JetStreamMaxStore > 0 && store > o.JetStreamMaxStore:
		return fmt.Errorf("server: accounts: their jetstream max_file (%d bytes together) exceed jetstream.max_file_store (%d): insufficient storage resources available", store, o.JetStreamMaxStore)
	}
	return nil
}

// safeDirName reports whether name can be a directory's name on every
// platform without escaping its parent: the stream name rule (no '.',
// so no ".." either, no wildcards, separators, spaces or control
// characters), at most 255 bytes.
func safeDirName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case b < 0x20 || b == 0x7f:
			return false
		case b == '.' || b == '*' || b == '>' || b == '/' || b == '\\' || b == ' ' || b == ':':
			return false
		}
	}
	return true
}

// jetstreamOptions are the options of account acc's JetStream: the
// server's, with the account's directory and limits.
func (s *Server) jetstreamOptions(acc *account, cfg *AccountJetStream) jetstream.Options {
	opts := s.serverJetStreamOptions(s.accountStoreDir(acc.name), s.log.With("component", "jetstream", "account", acc.name))
	opts.MaxMemory, opts.MaxStorage = cfg.MaxMemory, cfg.MaxStore
	opts.AccountName = acc.name
	opts.Account = cfg.limits()
	return opts
}

// startAccountsJetStream starts the JetStream of every account of
// accounts that has one configured and none running yet in set. On an
// error, those it started are stopped again.
func (s *Server) startAccountsJetStream(accounts []Account, set accountSet) (err error) {
	var started []*account
	defer func() {
		if err != nil {
			for _, acc := range started {
				acc.js.Swap(nil).Shutdown()
			}
		}
	}()
	for _, a := range accounts {
		acc := set[a.Name]
		if a.JetStream == nil || acc == nil || acc.js.Load() != nil {
			continue
		}
		js, err := jetstream.New(jetstreamCore{s, acc}, s.jetstreamOptions(acc, a.JetStream))
		if err != nil {
			return fmt.Errorf("server: account %q: %w", a.Name, err)
		}
		if err := js.Start(); err != nil {
			return fmt.Errorf("server: account %q: %w", a.Name, err)
		}
		acc.js.Store(js)
		started = append(started, acc)
	}
	return nil
}

// updateAccountsJetStream gives each running JetStream of set the limits
// its account has in accounts, as the reference updates them: streams
// and consumers over a lowered limit stay, what comes next meets it.
func updateAccountsJetStream(accounts []Account, set accountSet) {
	for _, a := range accounts {
		if js := set[a.Name].js.Load(); js != nil && a.JetStream != nil {
			cfg := a.JetStream
			js.UpdateAccountLimits(cfg.MaxMemory, cfg.MaxStore, cfg.limits())
		}
	}
}

// stopRemovedJetStream stops the JetStream of the accounts of old that
// set no longer has (a reload removed them).
func stopRemovedJetStream(old, set accountSet) {
	for name, acc := range old {
		if js := acc.js.Load(); set[name] == nil && js != nil {
			js.Shutdown()
		}
	}
}

// stopAccountsJetStream stops the JetStream of every account of set.
func (s *Server) stopAccountsJetStream(set accountSet) {
	for _, acc := range set {
		if js := acc.js.Load(); js != nil {
			js.Shutdown()
		}
	}
}

// installNoJetStream answers the JetStream API in an account without
// JetStream, when the server has it, as the reference does.
func (s *Server) installNoJetStream(acc *account, cfg *AccountJetStream) error {
	if !s.opts.JetStream || cfg != nil {
		return nil
	}
	sub, err := s.subscribeIn(acc, &subscription{subject: sysJetStreamAPI, request: s.noJetStream(acc.trie)})
	acc.noJetStream = sub
	return err
}

// switchAccountsJetStream follows the accounts that gained or lost their
// jetstream key (reloadMu held, after startAccountsJetStream started the
// new ones), as the reference enables and disables an account's
// JetStream on a reload or an account JWT update: one that gained it
// stops answering "not enabled"; one that lost it has its JetStream shut
// down (its streams stay in its store, for when it comes back) and
// answers "not enabled" again.
func (s *Server) switchAccountsJetStream(accounts []Account, set accountSet) {
	for _, a := range accounts {
		acc := set[a.Name]
		switch {
		case a.JetStream != nil && acc.noJetStream != nil && acc.js.Load() != nil:
			s.unsubscribeIn(acc, acc.noJetStream)
			acc.noJetStream = nil
		case a.JetStream == nil && acc.js.Load() != nil:
			acc.js.Swap(nil).Shutdown()
			if err := s.installNoJetStream(acc, nil); err != nil {
				s.log.Error("account JetStream turned off: its API not answered", "account", a.Name, "err", err)
			}
			s.log.Info("account JetStream turned off", "account", a.Name)
		}
	}
}

// accountsRightsChanged tells every account's JetStream that users'
// rights may have changed.
func (s *Server) accountsRightsChanged() {
	for _, acc := range s.accountSet() {
		if js := acc.js.Load(); js != nil {
			js.RightsChanged()
		}
	}
}
