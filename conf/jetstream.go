package conf

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The jetstream key takes nats-server's two forms: a boolean, or the
// block
//
//	jetstream {
//	  store_dir: /data        # as the top-level store_dir
//	  max_memory_store: 1GB   # bytes all memory streams may hold together
//	  max_file_store: 100GB   # bytes all file streams may hold together
//	  domain: hub             # the JetStream domain
//	  sync_interval: 10s      # or "always" (bus's default)
//	  max_index_memory: 64MB  # bus's: per-message indexes of sealed segments held at once
//	  cipher: chachapoly      # or aes: encryption at rest (with key)
//	  key: $JS_KEY            # the encryption key; $NAME reads an environment variable
//	  prev_encryption_key: $JS_OLD_KEY  # the key being rotated away from
//	  enabled: true
//	  limits {                # what clients may set (server/jetstream/configlimits.go)
//	    max_ack_pending: 10000
//	    max_request_batch: 1000
//	    duplicate_window: 5m
//	    default_max_consumers: 1000
//	    max_ha_assets: 0
//	    batch { max_inflight_per_stream: 50, max_inflight_total: 1000, max_msgs: 1000, timeout: 10s }
//	  }
//	}
//
// A block without enabled turns JetStream on, as in nats-server.

// JetStream is the jetstream key: on or off, and what its block sets.
type JetStream struct {
	Enabled bool
	// Domain is the JetStream domain ("" for none).
	Domain string
	// MaxMemory and MaxStore bound the bytes all memory and all file
	// streams hold together; 0 for no bound.
	MaxMemory, MaxStore int64
	// SyncInterval, when not 0, makes streams that do not set
	// x_bus_durability sync at most this often instead of before every
	// ack ("always", 0, bus's default).
	SyncInterval time.Duration
	// MaxIndexMemory bounds the bytes the per-message indexes of sealed
	// segments take in memory across every stream (bus's own key); 0
	// means the default.
	MaxIndexMemory int64
	// Limits bound what clients may set on streams and consumers.
	Limits JetStreamLimits
	// Cipher ("chachapoly" or "aes", "" for the default chachapoly), Key
	// and PrevKey are encryption at rest (encryption.go); Key "" stores
	// plaintext.
	Cipher, Key, PrevKey string
}

// jetstreamValue binds the jetstream key; a block's store_dir sets the
// top-level store_dir.
type jetstreamValue struct {
	p        *JetStream
	storeDir *string
}

// jetstreamKeys are the block's keys, with nats-server's aliases.
var jetstreamKeys = map[string]string{
	"store_dir": "store_dir", "storedir": "store_dir", "store": "store_dir",
	"max_memory_store": "max_memory_store", "max_mem": "max_memory_store", "max_mem_store": "max_memory_store", "max_memory": "max_memory_store",
	"max_file_store": "max_file_store", "max_file": "max_file_store", "max_store": "max_file_store",
	"domain":        "domain",
	"sync_interval": "sync_interval", "sync": "sync_interval",
	"enabled": "enabled", "enable": "enabled",
	"max_index_memory": "max_index_memory",
	"limits":           "limits",
	"cipher":           "cipher",
	"key":              "key", "ek": "key", "encryption_key": "key",
	"prev_encryption_key": "prev_encryption_key", "prev_key": "prev_encryption_key", "prev_ek": "prev_encryption_key",
}

func (v jetstreamValue) set(raw any) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return boolValue{&v.p.Enabled}.set(raw)
	}
	next, storeDir := *v.p, *v.storeDir
	next.Enabled = true
	var errs []string
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		val := m[k]
		canonical, ok := jetstreamKeys[strings.ToLower(k)]
		var err error
		switch {
		case !ok:
			err = unknownKey(k, sortedKeys(jetstreamKeys))
		case canonical == "store_dir":
			err = stringValue{&storeDir}.set(val)
		case canonical == "max_memory_store":
			err = sizeValue{&next.MaxMemory}.set(val)
		case canonical == "max_file_store":
			err = sizeValue{&next.MaxStore}.set(val)
		case canonical == "domain":
			err = stringValue{&next.Domain}.set(val)
		case canonical == "sync_interval":
			err = syncInterval(&next.SyncInterval, val)
		case canonical == "enabled":
			err = boolValue{&next.Enabled}.set(val)
		case canonical == "max_index_memory":
			err = sizeValue{&next.MaxIndexMemory}.set(val)
		case canonical == "limits":
			err = jetstreamLimits(&next.Limits, val)
		case canonical == "cipher":
			err = cipherValue(&next.Cipher, val)
		case canonical == "key":
			err = secretValue(&next.Key, val)
		case canonical == "prev_encryption_key":
			err = secretValue(&next.PrevKey, val)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", k, err))
		}
	}
	if err := next.checkEncryption(); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	*v.p, *v.storeDir = next, storeDir
	return nil
}

// syncInterval reads sync_interval: a duration, or "always" (0: fsync
// before every ack, bus's default).
func syncInterval(p *time.Duration, raw any) error {
	if s, ok := raw.(string); ok && strings.EqualFold(strings.TrimSpace(s), "always") {
		*p = 0
		return nil
	}
	d, ok := duration(raw)
	if !ok || d < 0 {
		return fmt.Errorf("%s is not a duration or \"always\"", describe(raw))
	}
	*p = d
	return nil
}

func (v jetstreamValue) String() string { return boolValue{&v.p.Enabled}.String() }
func (v jetstreamValue) kind() string   { return "bool" }
