package jetstream

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/bus-dev/bus/jetlog"
)

// Encryption is encryption at rest, the reference's jetstream { cipher,
// key, prev_encryption_key }. With Key set every new file stream is
// encrypted (jetlog's seal.go: a random data key per stream, wrapped by
// Key, in its stream.key) and an encrypted stream opens only with the
// key it was wrapped by; memory streams are never written to disk.
type Encryption struct {
	// Cipher is "chachapoly" (also "chacha"; the default) or "aes". A
	// stream keeps the cipher it was created with.
	Cipher string
	// Key is the secret the data keys are wrapped by; "" stores
	// plaintext.
	Key string
	// PrevKey is the key being rotated away from: a stream whose data
	// key it wraps is opened and its stream.key rewrapped by Key.
	PrevKey string
}

// Check reports a configuration that would not do what it says.
func (e Encryption) Check() error {
	if _, err := jetlog.ParseCipher(e.Cipher); err != nil {
		return fmt.Errorf("jetstream: cipher: %w", err)
	}
	switch {
	case e.Key == "" && e.Cipher != "":
		return errors.New("jetstream: cipher is set without a key: nothing would be encrypted")
	case e.Key == "" && e.PrevKey != "":
		return errors.New("jetstream: prev_encryption_key is set without a key")
	case e.Key != "" && e.Key == e.PrevKey:
		return errors.New("jetstream: prev_encryption_key equals key")
	}
	return nil
}

// keyring derives the keys (once: it is deliberately slow); nil without
// a key.
func (e Encryption) keyring() (*jetlog.Keyring, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	if e.Key == "" {
		return nil, nil
	}
	c, _ := jetlog.ParseCipher(e.Cipher)
	return jetlog.NewKeyring(c, e.Key, e.PrevKey)
}

// logOptions are the jetlog options every stream's log is opened with.
func (sh *shared) logOptions() jetlog.Options {
	return jetlog.Options{FS: sh.fs, Logger: sh.log, Now: sh.now, FileCache: sh.files, IndexCache: sh.index, Keys: sh.keys}
}

// onlyKeyFiles says a stream directory holds nothing but what an
// encrypted create writes before its stream.meta (and the LOCK): a
// create cut short, like an empty directory.
func onlyKeyFiles(names []os.DirEntry) bool {
	for _, e := range names {
		if n := e.Name(); n != "stream.key" && n != "stream.key.tmp" && n != "LOCK" {
			return false
		}
	}
	return true
}

// keyMismatch says err is a stream refused for its encryption: a missing
// or wrong key, or a key for a plaintext stream.
func keyMismatch(err error) bool {
	return errors.Is(err, jetlog.ErrNoKey) || errors.Is(err, jetlog.ErrWrongKey) || errors.Is(err, jetlog.ErrNotEncrypted)
}

// reportKeyMismatches sums up, after the streams are loaded, those left
// offline for their encryption, so one line names them all.
func (svc *Service) reportKeyMismatches(names []string) {
	if len(names) == 0 {
		return
	}
	svc.sh.log.Error("streams not loaded for their encryption: check jetstream.key and prev_encryption_key (docs/encryption.md)",
		"streams", strings.Join(names, ","), "count", len(names), "encryption", svc.sh.keys.Describe())
}
