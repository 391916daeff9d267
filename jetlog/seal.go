package jetlog

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
)

// Encryption at rest. A stream's records and files are sealed with an
// AEAD under the stream's own random data key; the data key is stored in
// stream.key, wrapped by the key-encryption key the operator configures
// (Keyring). Rotating the configured key rewraps stream.key and leaves
// the data alone (streamkey.go). See doc.go for the byte layouts.

// Cipher names the AEAD of an encrypted store.
type Cipher string

// The ciphers. The names are the config's (jetstream.cipher).
const (
	// ChaChaPoly is XChaCha20-Poly1305: 24-byte nonces, the default.
	ChaChaPoly Cipher = "chachapoly"
	// AES is AES-256-GCM: 12-byte nonces, hardware-accelerated on most
	// CPUs, and the one FIPS 140 allows.
	AES Cipher = "aes"
)

// ParseCipher maps a config value to a Cipher: "chachapoly" or "chacha"
// (the reference's alias), "aes"; "" is ChaChaPoly, the reference's
// default.
func ParseCipher(s string) (Cipher, error) {
	switch s {
	case "", "chachapoly", "chacha":
		return ChaChaPoly, nil
	case "aes":
		return AES, nil
	}
	return "", fmt.Errorf("jetlog: unknown cipher %q (want chachapoly or aes)", s)
}

// dataKeySize is the size of a stream's data key and of a key-encryption
// key: 256 bits for both ciphers.
const dataKeySize = 32

// newAEAD returns the AEAD of c under key.
func newAEAD(c Cipher, key []byte) (cipher.AEAD, error) {
	switch c {
	case ChaChaPoly:
		return chacha20poly1305.NewX(key)
	case AES:
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	}
	return nil, fmt.Errorf("jetlog: unknown cipher %q", c)
}

// Keyring holds the configured key-encryption keys: the current one,
// which new streams use and every stream.key is rewrapped to, and
// optionally the previous one, tried when the current one does not open
// a stream.key (key rotation). It is built once per server (the key
// derivation is deliberately slow) and shared by every Log; it is
// immutable.
type Keyring struct {
	cipher Cipher
	keks   [][]byte // derived key-encryption keys, current first
}

// kekSalt separates bus's key derivation from any other use of the same
// secret. It is fixed (a salt per stream would cost the derivation per
// stream at every start), so the key should be random rather than a
// passphrase (docs/encryption.md). Part of the disk format: never change
// it.
const kekSalt = "bus jetlog key-encryption key v1"

// NewKeyring derives the key-encryption keys from the configured secrets
// (argon2id, so a short passphrase costs an attacker dearly too). key is
// required; prevKey, the key being rotated away from, may be empty. c is
// the cipher new streams are created with; a stream keeps the one it was
// created with, whatever c is later.
func NewKeyring(c Cipher, key, prevKey string) (*Keyring, error) {
	if key == "" {
		return nil, errors.New("jetlog: encryption key is empty")
	}
	if prevKey == key {
		return nil, errors.New("jetlog: previous encryption key equals the current one")
	}
	if _, err := newAEAD(c, make([]byte, dataKeySize)); err != nil {
		return nil, err
	}
	k := &Keyring{cipher: c}
	for _, secret := range []string{key, prevKey} {
		if secret == "" {
			continue
		}
		// 19 MiB, two passes: the OWASP minimum for argon2id, about 30 ms
		// once per server start.
		k.keks = append(k.keks, argon2.IDKey([]byte(secret), []byte(kekSalt), 2, 19<<10, 1, dataKeySize))
	}
	return k, nil
}

// sealer seals and opens one stream's records and files under its data
// key. A nil *sealer is a plaintext stream: its methods then encode and
// decode the plain formats.
//
// Nonces are never reused under a data key: each one is base plus a
// counter, where base is drawn from crypto/rand when the sealer is made
// (each Open of the stream) and the counter only counts up within it. Two
// opens collide only if their random bases land within one run of each
// other: about opens^2 * records per open / 2^96 for AES-GCM's 96-bit
// nonces (2^-44 for 2^10 opens of 2^32 records each), and negligible for
// XChaCha's 192 bits. A record rewritten after a crash (a torn tail cut
// off and written again) gets a fresh nonce, which a nonce derived from
// its seq or its offset would not.
type sealer struct {
	dir  string // the stream directory: sealed files are bound to their names in it
	aead cipher.AEAD
	ns   int // nonce size
	base [chacha20poly1305.NonceSizeX]byte
	ctr  atomic.Uint64
}

func newSealer(dir string, c Cipher, dataKey []byte) (*sealer, error) {
	s := &sealer{dir: dir}
	if _, err := rand.Read(s.base[:]); err != nil {
		return nil, fmt.Errorf("jetlog: nonce base: %w", err)
	}
	var err error
	if c == ChaChaPoly {
		s.aead, err = newXChaCha(dataKey, s.base[:])
	} else {
		s.aead, err = newAEAD(c, dataKey)
	}
	if err != nil {
		return nil, err
	}
	s.ns = s.aead.NonceSize()
	return s, nil
}

// overhead is what sealing adds to a record: its nonce and tag.
func (s *sealer) overhead() int {
	if s == nil {
		return 0
	}
	return s.ns + s.aead.Overhead()
}

// nonce fills dst (ns bytes) with the next nonce: the counter is added to
// the base's last 8 bytes.
func (s *sealer) nonce(dst []byte) {
	copy(dst, s.base[:s.ns])
	tail := dst[s.ns-8:]
	binary.LittleEndian.PutUint64(tail, binary.LittleEndian.Uint64(tail)+s.ctr.Add(1))
}

// appendRecord encodes a record at the end of dst, sealed unless s is nil
// (see appendRecordFlags). A sealed record is
//
//	len u32 | crc u32 | nonce | AEAD(body, ad = len) incl. tag
//
// where body is the plain record's, and the crc covers len and all that
// follows, so a torn record is found without the key, as in a plain one.
// It does not allocate when dst has room for the sealed record.
func (s *sealer) appendRecord(dst []byte, kind byte, seq uint64, ts int64, subject string, hdr, payload []byte, flags uint32) []byte {
	if s == nil {
		return appendRecordFlags(dst, kind, seq, ts, subject, hdr, payload, flags)
	}
	start := len(dst)
	dst = appendRecordFlags(dst, kind, seq, ts, subject, hdr, payload, flags)
	n := len(dst) - start - frameSize // the plain body
	dst = append(dst, make([]byte, s.overhead())...)
	b := dst[start:]
	body := b[frameSize+s.ns : frameSize+s.ns+n]
	copy(body, b[frameSize:frameSize+n])
	binary.LittleEndian.PutUint32(b[0:], uint32(n+s.overhead()))
	nonce := b[frameSize : frameSize+s.ns]
	s.nonce(nonce)
	s.aead.Seal(body[:0], nonce, body, b[0:4])
	crc := crc32.Update(0, castagnoli, b[0:4])
	crc = crc32.Update(crc, castagnoli, b[frameSize:])
	binary.LittleEndian.PutUint32(b[4:], crc)
	return dst
}

// decode checks and decodes one whole record (frame included), opening
// it in place if s is not nil: b then holds the plain body, so a record
// is decoded once. It returns a reason on failure, never panics; a record
// that fails authentication (tampered, or sealed under another key) is
// damage like a failed crc.
func (s *sealer) decode(b []byte) (record, string) {
	if s == nil {
		return decodeRecord(b)
	}
	if reason := s.frame(b); reason != "" {
		return record{}, reason
	}
	nonce := b[frameSize : frameSize+s.ns]
	ct := b[frameSize+s.ns:]
	plain, err := s.aead.Open(ct[:0], nonce, ct, b[0:4])
	if err != nil {
		return record{}, reasonAuth
	}
	return decodeBody(plain)
}

// reasonAuth is why a sealed record whose frame and crc hold failed to
// open. A torn write cannot cause it (its crc would not hold), so it is
// damage in place, never a torn tail: the scan reports it and goes on
// after it (scanSegment, Consumer.replayJournal).
const reasonAuth = "authentication failed"

// frame checks a sealed record's length and crc without opening it: what
// a scan that resynchronises after damage may ask of every offset, since
// opening in place is done once, by decode.
func (s *sealer) frame(b []byte) string {
	if len(b) < frameSize+bodyFixed+s.overhead() {
		return "short record"
	}
	n, ok := frameLen(b)
	if !ok || n < bodyFixed+s.overhead() {
		return "implausible length"
	}
	if len(b) != frameSize+n {
		return "length mismatch"
	}
	crc := crc32.Update(0, castagnoli, b[0:4])
	crc = crc32.Update(crc, castagnoli, b[frameSize:])
	if crc != binary.LittleEndian.Uint32(b[4:8]) {
		return "crc mismatch"
	}
	return ""
}

// sealedMagic starts every sealed file (all but segments, journals, LOCK,
// clean and stream.key). Part of the disk format.
const sealedMagic = "JLSE"

// fileAD is what a sealed file is bound to: its name in the stream
// directory ("stream.meta", "consumers/ORDERS/state.snap"), so one sealed
// file cannot stand in for another, and the stream may be renamed.
func (s *sealer) fileAD(name string) string {
	if rel, ok := strings.CutPrefix(name, s.dir+"/"); ok {
		return rel
	}
	return path.Base(name)
}

// sealFile seals the contents of the file name. Plain data comes back as
// is when s is nil.
func (s *sealer) sealFile(plain []byte, name string) []byte {
	if s == nil {
		return plain
	}
	ad := s.fileAD(name)
	out := make([]byte, len(sealedMagic)+s.ns, len(sealedMagic)+s.ns+len(plain)+s.aead.Overhead())
	copy(out, sealedMagic)
	nonce := out[len(sealedMagic):]
	s.nonce(nonce)
	return s.aead.Seal(out, nonce, plain, []byte(ad))
}

// openFile is the inverse of sealFile. Damage or another key is a
// *CorruptError naming the file.
func (s *sealer) openFile(data []byte, name string) ([]byte, error) {
	if s == nil {
		return data, nil
	}
	ad := s.fileAD(name)
	if len(data) < len(sealedMagic)+s.ns+s.aead.Overhead() || string(data[:len(sealedMagic)]) != sealedMagic {
		return nil, &CorruptError{Segment: ad, Reason: "not a sealed file"}
	}
	nonce := data[len(sealedMagic) : len(sealedMagic)+s.ns]
	plain, err := s.aead.Open(nil, nonce, data[len(sealedMagic)+s.ns:], []byte(ad))
	if err != nil {
		return nil, &CorruptError{Segment: ad, Reason: "authentication failed"}
	}
	return plain, nil
}

// tornFrames is tornSeqs for a sealed segment: the frames of its torn
// tail, counted by their lengths, as messages from lastGood+1 (a torn
// tombstone counts as one too, so the range may name one seq too many).
func tornFrames(tail []byte, lastGood uint64) (SeqRange, bool) {
	r := SeqRange{First: lastGood + 1, Last: lastGood}
	for pos := 0; pos < len(tail); {
		rest := tail[pos:]
		if len(rest) < frameSize {
			if pos == 0 {
				r.Last = r.First
			}
			break
		}
		n, ok := frameLen(rest)
		if !ok {
			break
		}
		r.Last++
		pos += frameSize + n
	}
	return r, r.Last >= r.First
}

// Describe names the keyring for a log line: its cipher, and whether a
// previous key is being rotated away from; "none" for a nil keyring.
// It never shows a key.
func (k *Keyring) Describe() string {
	switch {
	case k == nil:
		return "none"
	case len(k.keks) > 1:
		return string(k.cipher) + " (rotating from the previous key)"
	}
	return string(k.cipher)
}
