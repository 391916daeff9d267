package jetlog

import (
	"crypto/cipher"
	"errors"
	"sync/atomic"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// xchacha is XChaCha20-Poly1305 with its subkeys kept: byte for byte what
// chacha20poly1305.NewX seals and opens, without the HChaCha20 it runs
// per message. XChaCha derives a subkey from the key and the nonce's
// first 16 bytes, then seals with ChaCha20-Poly1305 under it and the
// last 8 (after 4 zero bytes). A sealer's nonces share their first 16
// bytes (the counter moves only the last 8, see sealer.nonce), so one
// subkey serves every record a sealer writes, and a reader sees one per
// open of the stream that wrote.
type xchacha struct {
	key  []byte
	own  *xsub                // the subkey of the sealer's nonce base, fixed
	last atomic.Pointer[xsub] // the last other one used, for reads of older records
}

type xsub struct {
	prefix [16]byte
	aead   cipher.AEAD
}

func newXChaCha(key []byte, base []byte) (*xchacha, error) {
	if len(key) != chacha20poly1305.KeySize {
		return nil, errors.New("jetlog: xchacha: bad key size")
	}
	x := &xchacha{key: key}
	own, err := x.derive(base)
	if err != nil {
		return nil, err
	}
	x.own = own
	return x, nil
}

func (x *xchacha) derive(nonce []byte) (*xsub, error) {
	subkey, err := chacha20.HChaCha20(x.key, nonce[:16])
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.New(subkey)
	if err != nil {
		return nil, err
	}
	return &xsub{prefix: [16]byte(nonce[:16]), aead: aead}, nil
}

// sub returns the subkey's AEAD for a 24-byte nonce.
func (x *xchacha) sub(nonce []byte) cipher.AEAD {
	p := [16]byte(nonce[:16])
	if p == x.own.prefix {
		return x.own.aead
	}
	if s := x.last.Load(); s != nil && s.prefix == p {
		return s.aead
	}
	s, err := x.derive(nonce)
	if err != nil {
		panic(err) // unreachable: the key and nonce sizes are checked
	}
	x.last.Store(s)
	return s.aead
}

func (x *xchacha) NonceSize() int { return chacha20poly1305.NonceSizeX }
func (x *xchacha) Overhead() int  { return chacha20poly1305.Overhead }

// Seal and Open pass ChaCha20-Poly1305 its 12-byte nonce as the last 12
// bytes of the caller's, with the first 4 zeroed for the call and then
// put back: no copy that would escape to the heap. The caller owns the
// nonce's bytes (they are in its record or file buffer) for the call.

func (x *xchacha) Seal(dst, nonce, plain, ad []byte) []byte {
	aead := x.sub(nonce)
	var saved [4]byte
	copy(saved[:], nonce[12:16])
	clear(nonce[12:16])
	out := aead.Seal(dst, nonce[12:24], plain, ad)
	copy(nonce[12:16], saved[:])
	return out
}

func (x *xchacha) Open(dst, nonce, ct, ad []byte) ([]byte, error) {
	aead := x.sub(nonce)
	var saved [4]byte
	copy(saved[:], nonce[12:16])
	clear(nonce[12:16])
	out, err := aead.Open(dst, nonce[12:24], ct, ad)
	copy(nonce[12:16], saved[:])
	return out, err
}
