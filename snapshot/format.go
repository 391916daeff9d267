package snapshot

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"

	"github.com/klauspost/compress/s2"
)

// The format (docs/backup.md): an s2 stream (the framing format,
// which natscli decodes to count its progress) holding the magic, then
// records "kind u8 | length u32 | body | crc32c u32" (big endian, the
// CRC over kind, length and body): one header, the messages in seq order,
// the consumers, and one end record with the counts. It is bus's own,
// versioned, and says nothing of how the store lays out its files.
const (
	Magic   = "BUSSNAP\n"
	Version = 1

	KindHeader   byte = 'H'
	KindMsg      byte = 'M'
	KindConsumer byte = 'C'
	KindEnd      byte = 'E'

	// MaxRecord bounds one record's body, so a damaged length cannot
	// make a restore allocate without limit.
	MaxRecord = 256 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Header is the first record: what is snapshotted, and the cut.
type Header struct {
	Version  int             `json:"version"`
	Config   json.RawMessage `json:"config"`
	Created  time.Time       `json:"created"`
	FirstSeq uint64          `json:"first_seq"`
	LastSeq  uint64          `json:"last_seq"` // the cut: no message above it
	Time     time.Time       `json:"time"`
	// AfterSeq is set in an increment: it holds the messages after it
	// (the last seq of the backup it follows), and is restored only
	// after that backup.
	AfterSeq uint64 `json:"after_seq,omitempty"`
}

// Consumer is one durable consumer's config and state at the cut.
type Consumer struct {
	Name      string          `json:"name"`
	Created   time.Time       `json:"created"`
	Config    json.RawMessage `json:"config"`
	Delivered SeqPair         `json:"delivered"`
	AckFloor  SeqPair         `json:"ack_floor"`
	Pending   []Pending       `json:"pending,omitempty"`
}

type SeqPair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

type Pending struct {
	Stream     uint64 `json:"stream_seq"`
	Consumer   uint64 `json:"consumer_seq"`
	Deliveries uint64 `json:"deliveries"`
	Deadline   int64  `json:"deadline"`
}

// End closes a complete snapshot: a restore that does not reach it
// refuses the snapshot as incomplete.
type End struct {
	Messages  uint64 `json:"messages"`
	Consumers int    `json:"consumers"`
}

// Msg is a message record's body, binary: seq u64, time (unix ns)
// i64, subject length u16, subject, header length u32, header, data
// length u32, data.
type Msg struct {
	Seq     uint64
	Time    int64
	Subject string
	Header  []byte
	Data    []byte
}

// Writer encodes records into w (compressed).
type Writer struct {
	z   *s2.Writer
	buf []byte
}

func NewWriter(w io.Writer) (*Writer, error) {
	// Blocks of 128 KiB rather than s2's 1 MiB: a writer's buffers are
	// about twice a block, allocated anew by each snapshot, and an account
	// backup takes one snapshot per stream.
	sw := &Writer{z: s2.NewWriter(w, s2.WriterConcurrency(1), s2.WriterBlockSize(128<<10))}
	if _, err := sw.z.Write([]byte(Magic)); err != nil {
		return nil, err
	}
	return sw, nil
}

func (sw *Writer) Record(kind byte, body []byte) error {
	var head [5]byte
	head[0] = kind
	binary.BigEndian.PutUint32(head[1:], uint32(len(body)))
	crc := crc32.Update(crc32.Checksum(head[:], crcTable), crcTable, body)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	for _, b := range [][]byte{head[:], body, tail[:]} {
		if _, err := sw.z.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (sw *Writer) JSON(kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return sw.Record(kind, b)
}

func (sw *Writer) Msg(m Msg) error {
	b := sw.buf[:0]
	b = binary.BigEndian.AppendUint64(b, m.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(m.Time))
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.Subject)))
	b = append(b, m.Subject...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Header)))
	b = append(b, m.Header...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(m.Data)))
	b = append(b, m.Data...)
	sw.buf = b
	return sw.Record(KindMsg, b)
}

func (sw *Writer) Close() error { return sw.z.Close() }

// Reader decodes a snapshot, checking every record's CRC and the
// order of the records.
type Reader struct {
	r    *bufio.Reader
	buf  []byte
	n    int // records read, for error messages
	seen byte
}

func NewReader(r io.Reader) (*Reader, error) {
	sr := &Reader{r: bufio.NewReader(s2.NewReader(r))}
	var magic [len(Magic)]byte
	if _, err := io.ReadFull(sr.r, magic[:]); err != nil {
		return nil, readErr(err)
	}
	if string(magic[:]) != Magic {
		return nil, errors.New("not a bus snapshot (a nats-server snapshot cannot be restored into bus)")
	}
	return sr, nil
}

// readErr names a compressed stream that stops or is damaged.
func readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("snapshot is incomplete (truncated)")
	}
	// A cut inside a compressed block reads as corrupt too.
	return fmt.Errorf("snapshot is damaged or incomplete: %w", err)
}

// next returns the next record; the body is good until the next call.
func (sr *Reader) Next() (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(sr.r, head[:]); err != nil {
		return 0, nil, readErr(err)
	}
	sr.n++
	size := binary.BigEndian.Uint32(head[1:])
	if size > MaxRecord {
		return 0, nil, fmt.Errorf("snapshot is damaged: record %d claims %d bytes", sr.n, size)
	}
	if cap(sr.buf) < int(size)+4 {
		sr.buf = make([]byte, size+4)
	}
	b := sr.buf[:size+4]
	if _, err := io.ReadFull(sr.r, b); err != nil {
		return 0, nil, readErr(err)
	}
	body := b[:size]
	crc := crc32.Update(crc32.Checksum(head[:], crcTable), crcTable, body)
	if crc != binary.BigEndian.Uint32(b[size:]) {
		return 0, nil, fmt.Errorf("snapshot is damaged: checksum mismatch in record %d", sr.n)
	}
	kind := head[0]
	if !sr.inOrder(kind) {
		return 0, nil, fmt.Errorf("snapshot is damaged: record %d of kind %q out of order", sr.n, kind)
	}
	sr.seen = kind
	return kind, body, nil
}

// inOrder holds the record order: header, messages, consumers, end.
func (sr *Reader) inOrder(kind byte) bool {
	switch kind {
	case KindHeader:
		return sr.seen == 0
	case KindMsg:
		return sr.seen == KindHeader || sr.seen == KindMsg
	case KindConsumer:
		return sr.seen == KindHeader || sr.seen == KindMsg || sr.seen == KindConsumer
	case KindEnd:
		return sr.seen != 0 && sr.seen != KindEnd
	}
	return false
}

func DecodeMsg(b []byte) (Msg, error) {
	bad := errors.New("snapshot is damaged: a message record is malformed")
	var m Msg
	if len(b) < 18 {
		return m, bad
	}
	m.Seq = binary.BigEndian.Uint64(b)
	m.Time = int64(binary.BigEndian.Uint64(b[8:]))
	n := int(binary.BigEndian.Uint16(b[16:]))
	b = b[18:]
	if len(b) < n+4 {
		return m, bad
	}
	m.Subject, b = string(b[:n]), b[n:]
	n = int(binary.BigEndian.Uint32(b))
	b = b[4:]
	if len(b) < n+4 {
		return m, bad
	}
	m.Header, b = b[:n], b[n:]
	n = int(binary.BigEndian.Uint32(b))
	b = b[4:]
	if len(b) != n {
		return m, bad
	}
	m.Data = b
	if len(m.Header) == 0 {
		m.Header = nil
	}
	return m, nil
}
