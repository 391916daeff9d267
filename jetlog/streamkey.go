package jetlog

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// keyFile holds an encrypted stream's data key, wrapped by the
// configured key. It is written before anything it seals, and never
// sealed itself. Part of the disk format (see doc.go).
const keyFile = "stream.key"

// streamKey is what stream.key holds.
type streamKey struct {
	Version int    `msgpack:"v"`
	Cipher  Cipher `msgpack:"cipher"`
	// Wrapped is nonce | AEAD(data key) under a key-encryption key, with
	// the cipher's name as associated data.
	Wrapped []byte `msgpack:"wrapped"`
}

// Errors of an encrypted store, wrapped with the stream directory.
var (
	// ErrNoKey: the stream is encrypted (it has a stream.key) and no key
	// is configured.
	ErrNoKey = errors.New("jetlog: the stream is encrypted and no encryption key is configured")
	// ErrWrongKey: neither the configured key nor the previous one opens
	// the stream's stream.key.
	ErrWrongKey = errors.New("jetlog: the stream is encrypted with another key")
	// ErrNotEncrypted: a key is configured and the stream was stored
	// without one.
	ErrNotEncrypted = errors.New("jetlog: the stream is stored unencrypted and an encryption key is configured")
)

// wrap seals a data key under the current key-encryption key.
func (k *Keyring) wrap(c Cipher, dataKey []byte) ([]byte, error) {
	aead, err := newAEAD(c, k.keks[0])
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(dataKey)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, dataKey, []byte(c)), nil
}

// unwrap opens a stream.key with the first key that fits; rotated says
// it was not the current one.
func (k *Keyring) unwrap(sk streamKey) (dataKey []byte, rotated bool, err error) {
	for i, kek := range k.keks {
		aead, err := newAEAD(sk.Cipher, kek)
		if err != nil {
			return nil, false, err
		}
		if len(sk.Wrapped) < aead.NonceSize() {
			return nil, false, errors.New("wrapped key too short")
		}
		ns := aead.NonceSize()
		if key, err := aead.Open(nil, sk.Wrapped[:ns], sk.Wrapped[ns:], []byte(sk.Cipher)); err == nil && len(key) == dataKeySize {
			return key, i > 0, nil
		}
	}
	return nil, false, ErrWrongKey
}

// keyMode says what loadSealer may do to the directory.
type keyMode int

const (
	keyRead   keyMode = iota // only read: LoadConfigWith
	keyCreate                // Open: create stream.key for a new stream, rewrap a rotated one
)

// loadSealer returns the sealer of the stream in dir (nil for a plaintext
// one), checking the configured keys against what the directory holds.
// A wrong or missing key, or a plaintext stream with a key configured, is
// an error naming the directory, and leaves every file as it was. With
// keyCreate, a new stream (no stream.meta, no segment) gets a fresh data
// key, durable before anything it seals is written, and a stream.key
// opened by the previous key is rewrapped to the current one.
func loadSealer(fsys FS, dir string, keys *Keyring, mode keyMode) (*sealer, error) {
	name := path.Join(dir, keyFile)
	var sk streamKey
	err := readChecked(fsys, nil, name, &sk)
	switch {
	case err == nil && keys == nil:
		return nil, fmt.Errorf("%w: %s (configure jetstream.key)", ErrNoKey, dir)
	case err == nil:
		if sk.Version != 1 {
			return nil, fmt.Errorf("jetlog: %s: unknown version %d", name, sk.Version)
		}
		dataKey, rotated, err := keys.unwrap(sk)
		if err != nil {
			return nil, fmt.Errorf("%w: %s (configure the key it was encrypted with as jetstream.key, or as prev_encryption_key to rotate from it)", err, dir)
		}
		if rotated && mode == keyCreate {
			wrapped, err := keys.wrap(sk.Cipher, dataKey)
			if err != nil {
				return nil, err
			}
			sk.Wrapped = wrapped
			if err := writeChecked(fsys, nil, name, sk); err != nil {
				return nil, fmt.Errorf("jetlog: rewrap %s: %w", name, err)
			}
		}
		return newSealer(dir, sk.Cipher, dataKey)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("jetlog: %s: %w (the stream's data key is lost with it)", name, err)
	case keys == nil:
		return nil, nil
	}
	stored, err := holdsStream(fsys, dir)
	if err != nil {
		return nil, err
	}
	if stored {
		return nil, fmt.Errorf("%w: %s (back the stream up, remove it and restore it to encrypt it, or start without jetstream.key)", ErrNotEncrypted, dir)
	}
	if mode == keyRead {
		return nil, nil
	}
	dataKey := make([]byte, dataKeySize)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, fmt.Errorf("jetlog: data key: %w", err)
	}
	wrapped, err := keys.wrap(keys.cipher, dataKey)
	if err != nil {
		return nil, err
	}
	if err := writeChecked(fsys, nil, name, streamKey{Version: 1, Cipher: keys.cipher, Wrapped: wrapped}); err != nil {
		return nil, fmt.Errorf("jetlog: store %s: %w", name, err)
	}
	return newSealer(dir, keys.cipher, dataKey)
}

// holdsStream says whether dir holds a stream's files: its meta or a
// segment.
func holdsStream(fsys FS, dir string) (bool, error) {
	names, err := fsys.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if n == metaFile || strings.HasSuffix(n, segSuffix) {
			return true, nil
		}
	}
	return false, nil
}

// Encrypted reports whether the stream stored in dir is encrypted (has a
// stream.key). A nil fsys means the OS's.
func Encrypted(fsys FS, dir string) bool {
	if fsys == nil {
		fsys = vfs.OSFS{}
	}
	var sk streamKey
	return readChecked(fsys, nil, path.Join(dir, keyFile), &sk) == nil
}
