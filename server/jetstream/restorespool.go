package jetstream

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// spool is the file a restore's chunks are written to before they are
// checked and built into a stream. On an encrypted store it is sealed
// too, so a restore writes nothing readable to the disk even for the
// seconds it runs: under a random AES-256-GCM key that lives only in the
// restore's memory (a crash loses the key with the restore, which it
// would lose anyway), in frames of len u32 | AEAD(chunk) with the frame's
// number as the nonce. The key seals one file once, so counted nonces
// never repeat, and a frame moved, dropped or altered fails to open.
type spool struct {
	fs   vfs.FS // the store's, so that its faults and crashes reach the spool too
	path string
	aead cipher.AEAD // nil: plaintext
}

// newSpool names the spool at path on fsys (nil for the operating
// system's), sealed if sealed is set.
func newSpool(fsys vfs.FS, path string, sealed bool) (spool, error) {
	sp := spool{fs: baseFS(fsys), path: path}
	if !sealed {
		return sp, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return spool{}, err
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return spool{}, err
	}
	if sp.aead, err = cipher.NewGCM(b); err != nil {
		return spool{}, err
	}
	return sp, nil
}

// maxSpoolFrame bounds a sealed frame: a chunk is at most 1 MiB
// (snapshot.go), a restore's at most what a client sends in one message.
const maxSpoolFrame = 64 << 20

// create makes the spool file for writing.
func (sp spool) create() (io.WriteCloser, error) {
	f, err := sp.fs.Create(sp.path)
	if err != nil {
		return nil, err
	}
	if sp.aead == nil {
		return f, nil
	}
	return &spoolWriter{f: f, aead: sp.aead}, nil
}

// open reads the spool back as the chunks were written.
func (sp spool) open() (io.ReadCloser, error) {
	f, err := sp.fs.OpenFile(sp.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if sp.aead == nil {
		return &fileReader{File: f}, nil
	}
	return &spoolReader{f: f, r: bufio.NewReader(&fileReader{File: f}), aead: sp.aead}, nil
}

// fileReader reads a vfs.File from its start, in order.
type fileReader struct {
	vfs.File
	off int64
}

func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if n > 0 && errors.Is(err, io.EOF) {
		err = nil // the next Read says it
	}
	return n, err
}

func spoolNonce(n uint64) []byte {
	nonce := make([]byte, 12)
	binary.BigEndian.PutUint64(nonce[4:], n)
	return nonce
}

type spoolWriter struct {
	f    vfs.File
	aead cipher.AEAD
	n    uint64
}

func (w *spoolWriter) Write(p []byte) (int, error) {
	frame := make([]byte, 4, 4+len(p)+w.aead.Overhead())
	frame = w.aead.Seal(frame, spoolNonce(w.n), p, nil)
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-4))
	if _, err := w.f.Write(frame); err != nil {
		return 0, err
	}
	w.n++
	return len(p), nil
}

func (w *spoolWriter) Close() error { return w.f.Close() }

type spoolReader struct {
	f    vfs.File
	r    *bufio.Reader
	aead cipher.AEAD
	n    uint64
	rest []byte // what the last frame opened to and was not read yet
}

func (r *spoolReader) Read(p []byte) (int, error) {
	for len(r.rest) == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(r.r, hdr[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return 0, errors.New("snapshot is incomplete (truncated)")
			}
			return 0, err // io.EOF: the end
		}
		size := binary.LittleEndian.Uint32(hdr[:])
		if size > maxSpoolFrame {
			return 0, errors.New("restore spool is damaged")
		}
		ct := make([]byte, size)
		if _, err := io.ReadFull(r.r, ct); err != nil {
			return 0, errors.New("snapshot is incomplete (truncated)")
		}
		plain, err := r.aead.Open(ct[:0], spoolNonce(r.n), ct, nil)
		if err != nil {
			return 0, fmt.Errorf("restore spool is damaged: frame %d", r.n)
		}
		r.n++
		r.rest = plain
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

func (r *spoolReader) Close() error { return r.f.Close() }
