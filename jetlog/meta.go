package jetlog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
	"github.com/vmihailenco/msgpack/v5"
)

// File names in a stream directory. Part of the disk format (see doc.go).
const (
	metaFile  = "stream.meta" // crc32c u32 + msgpack(streamMeta), sealed if encrypted
	cleanFile = "clean"       // present only after a clean Close
	dedupFile = "dedup.snap"  // crc32c + msgpack(dedupSnapshot), trusted only with cleanFile
	lockFile  = "LOCK"        // locked while a Log has the stream open
	markFile  = "seq.mark"    // crc32c + msgpack(seqMark): the sequence high-water (seqmark.go)
	tmpSuffix = ".tmp"
)

// streamMeta is what stream.meta holds.
type streamMeta struct {
	Version int          `msgpack:"v"`
	Config  StreamConfig `msgpack:"config"`
	Created time.Time    `msgpack:"created"`
}

// LoadConfig reads the config stored in a stream directory, so a server can
// list its streams before opening them. A nil fsys means the OS's. A
// missing stream.meta is ErrNotFound (it matches fs.ErrNotExist too); a
// damaged one a *CorruptError.
//
// An encrypted stream's config is sealed: LoadConfig refuses it with
// ErrNoKey; use LoadConfigWith.
func LoadConfig(fsys FS, dir string) (StreamConfig, time.Time, error) {
	return LoadConfigWith(dir, Options{FS: fsys})
}

// LoadConfigWith is LoadConfig with the file system and encryption keys
// of opts (Options.FS, Options.Keys). A wrong or missing key, or a key
// for a stream stored without one, is ErrWrongKey, ErrNoKey or
// ErrNotEncrypted; nothing is written either way.
func LoadConfigWith(dir string, opts Options) (StreamConfig, time.Time, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = vfs.OSFS{}
	}
	s, err := loadSealer(fsys, path.Clean(dir), opts.Keys, keyRead)
	if err != nil {
		return StreamConfig{}, time.Time{}, fmt.Errorf("jetlog: load config %q: %w", dir, err)
	}
	var m streamMeta
	if err := readChecked(fsys, s, path.Join(dir, metaFile), &m); err != nil {
		return StreamConfig{}, time.Time{}, fmt.Errorf("jetlog: load config %q: %w", dir, notFound(err))
	}
	return m.Config, m.Created, nil
}

// notFound adds ErrNotFound to an error that says a file does not exist,
// keeping the original too.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}

// readChecked reads a crc32c-prefixed msgpack file into v, opening it
// with s (nil: a plain file). Damage is a *CorruptError; a missing file
// is fs.ErrNotExist.
func readChecked(fsys FS, s *sealer, name string, v any) error {
	data, err := readSealed(fsys, s, name)
	if err != nil {
		return err
	}
	if len(data) < 4 || crc32.Checksum(data[4:], castagnoli) != binary.LittleEndian.Uint32(data) {
		return &CorruptError{Segment: path.Base(name), Reason: "crc mismatch"}
	}
	if err := msgpack.Unmarshal(data[4:], v); err != nil {
		return &CorruptError{Segment: path.Base(name), Reason: "decode: " + err.Error()}
	}
	return nil
}

// writeChecked atomically replaces name with crc32c + msgpack(v), sealed
// by s unless it is nil: write a temporary file, sync it, rename it over
// name, sync the directory.
func writeChecked(fsys FS, s *sealer, name string, v any) error {
	return writeCheckedSized(fsys, s, name, v, 0)
}

// writeCheckedSized is writeChecked for a value whose encoding is about
// size bytes: it is encoded once into a buffer of that size with room for
// the CRC before it, so a large one (the catalog snapshot of a million
// subjects, tens of MB) is neither regrown nor copied on its way out.
func writeCheckedSized(fsys FS, s *sealer, name string, v any, size int) error {
	buf := bytes.NewBuffer(make([]byte, 4, 4+max(size, 60)))
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(buf)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("jetlog: encode %q: %w", name, err)
	}
	data := buf.Bytes()
	binary.LittleEndian.PutUint32(data, crc32.Checksum(data[4:], castagnoli))
	return writeFileAtomic(fsys, name, s.sealFile(data, name))
}

// readSealed reads a whole file and opens it with s (nil: as it is).
func readSealed(fsys FS, s *sealer, name string) ([]byte, error) {
	data, err := readAll(fsys, name)
	if err != nil {
		return nil, err
	}
	return s.openFile(data, name)
}

// readCheckedStream is readChecked for files that may be large (the
// dedup window): it decodes while reading, so the file's bytes are never
// held beside what they decode to, and checks the CRC once all are read.
// The format is readChecked's. v may be partly filled when an error
// returns: use it only after nil. A sealed file is read whole (an AEAD
// vouches for nothing before its end).
func readCheckedStream(fsys FS, s *sealer, name string, v any) error {
	if s != nil {
		return readChecked(fsys, s, name, v)
	}
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close() //nolint:errcheck // read-only
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var sum [4]byte
	if st.Size() < 4 {
		return &CorruptError{Segment: path.Base(name), Reason: "crc mismatch"}
	}
	if n, err := f.ReadAt(sum[:], 0); n != len(sum) {
		return err
	}
	h := crc32.New(castagnoli)
	r := io.TeeReader(bufio.NewReaderSize(io.NewSectionReader(f, 4, st.Size()-4), streamBuf), h)
	derr := msgpack.NewDecoder(r).Decode(v)
	if _, err := io.Copy(io.Discard, r); err != nil { // the rest, for the CRC
		return err
	}
	if h.Sum32() != binary.LittleEndian.Uint32(sum[:]) {
		return &CorruptError{Segment: path.Base(name), Reason: "crc mismatch"}
	}
	if derr != nil {
		return &CorruptError{Segment: path.Base(name), Reason: "decode: " + derr.Error()}
	}
	return nil
}

// writeCheckedStream is writeChecked for values that may be large: it
// encodes straight into the temporary file, so the encoding is never
// held in memory. The format is writeChecked's. A sealed file is
// encoded whole.
func writeCheckedStream(fsys FS, s *sealer, name string, v any) error {
	if s != nil {
		return writeChecked(fsys, s, name, v)
	}
	tmp := name + tmpSuffix
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		_ = f.Close() // err is the one that matters
		return err
	}
	var sum [4]byte
	if _, err := f.Write(sum[:]); err != nil { // the CRC, once known
		return fail(err)
	}
	h := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), streamBuf)
	if err := msgpack.NewEncoder(bw).Encode(v); err != nil {
		return fail(fmt.Errorf("jetlog: encode %q: %w", name, err))
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	binary.LittleEndian.PutUint32(sum[:], h.Sum32())
	if _, err := f.WriteAt(sum[:], 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(path.Dir(name))
}

// streamBuf is the buffer of readCheckedStream and writeCheckedStream.
const streamBuf = 64 << 10

func writeFileAtomic(fsys FS, name string, data []byte) error {
	tmp := name + tmpSuffix
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close() // the write error is the one that matters
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(path.Dir(name))
}

// readAll reads a whole file.
func readAll(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if n == len(data) {
		return data, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// RemoveStream deletes a closed stream's directory and everything in it,
// then syncs the parent directory. A nil fsys means the OS's.
func RemoveStream(fsys FS, dir string) error {
	if fsys == nil {
		fsys = vfs.OSFS{}
	}
	if err := removeTree(fsys, path.Clean(dir)); err != nil {
		return fmt.Errorf("jetlog: remove stream %q: %w", dir, err)
	}
	return fsys.SyncDir(path.Dir(path.Clean(dir)))
}

func removeTree(fsys FS, name string) error {
	if names, err := fsys.ReadDir(name); err == nil {
		for _, n := range names {
			if err := removeTree(fsys, path.Join(name, n)); err != nil {
				return err
			}
		}
	}
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
