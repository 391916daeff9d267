package jetstream

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

// The snapshot format (docs/backup.md): an s2 stream (the framing format,
// which natscli decodes to count its progress) holding the magic, then
// records "kind u8 | length u32 | body | crc32c u32" (big endian, the
// CRC over kind, length and body): one header, the messages in seq order,
// the consumers, and one end record with the counts. It is bus's own,
// versioned, and says nothing of how the store lays out its files.
const (
	snapMagic   = "BUSSNAP\n"
	snapVersion = 1

	snapKindHeader   byte = 'H'
	snapKindMsg      byte = 'M'
	snapKindConsumer byte = 'C'
	snapKindEnd      byte = 'E'

	// snapMaxRecord bounds one record's body, so a damaged length cannot
	// make a restore allocate without limit.
	snapMaxRecord = 256 << 20
)

var snapCRC = crc32.MakeTable(crc32.Castagnoli)

// snapHeader is the first record: what is snapshotted, and the cut.
type snapHeader struct {
	Version  int             `json:"version"`
	Config   json.RawMessage `json:"config"`
	Created  time.Time       `json:"created"`
	FirstSeq uint64          `json:"first_seq"`
	LastSeq  uint64          `json:"last_seq"` // the cut: no message above it
	Time     time.Time       `json:"time"`
}

// snapConsumer is one durable consumer's config and state at the cut.
type snapConsumer struct {
	Name      string          `json:"name"`
	Created   time.Time       `json:"created"`
	Config    json.RawMessage `json:"config"`
	Delivered snapSeqPair     `json:"delivered"`
	AckFloor  snapSeqPair     `json:"ack_floor"`
	Pending   []snapPending   `json:"pending,omitempty"`
}

type snapSeqPair struct {
	Consumer uint64 `json:"consumer_seq"`
	Stream   uint64 `json:"stream_seq"`
}

type snapPending struct {
	Stream     uint64 `json:"stream_seq"`
	Consumer   uint64 `json:"consumer_seq"`
	Deliveries uint64 `json:"deliveries"`
	Deadline   int64  `json:"deadline"`
}

// snapEnd closes a complete snapshot: a restore that does not reach it
// refuses the snapshot as incomplete.
type snapEnd struct {
	Messages  uint64 `json:"messages"`
	Consumers int    `json:"consumers"`
}

// snapMsg is a message record's body, binary: seq u64, time (unix ns)
// i64, subject length u16, subject, header length u32, header, data
// length u32, data.
type snapMsg struct {
	Seq     uint64
	Time    int64
	Subject string
	Header  []byte
	Data    []byte
}

// snapWriter encodes records into w (compressed).
type snapWriter struct {
	z   *s2.Writer
	buf []byte
}

func newSnapWriter(w io.Writer) (*snapWriter, error) {
	sw := &snapWriter{z: s2.NewWriter(w, s2.WriterConcurrency(1))}
	if _, err := sw.z.Write([]byte(snapMagic)); err != nil {
		return nil, err
	}
	return sw, nil
}

func (sw *snapWriter) record(kind byte, body []byte) error {
	var head [5]byte
	head[0] = kind
	binary.BigEndian.PutUint32(head[1:], uint32(len(body)))
	crc := crc32.Update(crc32.Checksum(head[:], snapCRC), snapCRC, body)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	for _, b := range [][]byte{head[:], body, tail[:]} {
		if _, err := sw.z.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (sw *snapWriter) json(kind byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return sw.record(kind, b)
}

func (sw *snapWriter) msg(m snapMsg) error {
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
	return sw.record(snapKindMsg, b)
}

func (sw *snapWriter) Close() error { return sw.z.Close() }

// snapReader decodes a snapshot, checking every record's CRC and the
// order of the records.
type snapReader struct {
	r    *bufio.Reader
	buf  []byte
	n    int // records read, for error messages
	seen byte
}

func newSnapReader(r io.Reader) (*snapReader, error) {
	sr := &snapReader{r: bufio.NewReader(s2.NewReader(r))}
	var magic [len(snapMagic)]byte
	if _, err := io.ReadFull(sr.r, magic[:]); err != nil {
		return nil, snapErr(err)
	}
	if string(magic[:]) != snapMagic {
		return nil, errors.New("not a bus snapshot (a nats-server snapshot cannot be restored into bus)")
	}
	return sr, nil
}

// snapErr names a compressed stream that stops or is damaged.
func snapErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("snapshot is incomplete (truncated)")
	}
	// A cut inside a compressed block reads as corrupt too.
	return fmt.Errorf("snapshot is damaged or incomplete: %w", err)
}

// next returns the next record; the body is good until the next call.
func (sr *snapReader) next() (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(sr.r, head[:]); err != nil {
		return 0, nil, snapErr(err)
	}
	sr.n++
	size := binary.BigEndian.Uint32(head[1:])
	if size > snapMaxRecord {
		return 0, nil, fmt.Errorf("snapshot is damaged: record %d claims %d bytes", sr.n, size)
	}
	if cap(sr.buf) < int(size)+4 {
		sr.buf = make([]byte, size+4)
	}
	b := sr.buf[:size+4]
	if _, err := io.ReadFull(sr.r, b); err != nil {
		return 0, nil, snapErr(err)
	}
	body := b[:size]
	crc := crc32.Update(crc32.Checksum(head[:], snapCRC), snapCRC, body)
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
func (sr *snapReader) inOrder(kind byte) bool {
	switch kind {
	case snapKindHeader:
		return sr.seen == 0
	case snapKindMsg:
		return sr.seen == snapKindHeader || sr.seen == snapKindMsg
	case snapKindConsumer:
		return sr.seen == snapKindHeader || sr.seen == snapKindMsg || sr.seen == snapKindConsumer
	case snapKindEnd:
		return sr.seen != 0 && sr.seen != snapKindEnd
	}
	return false
}

func decodeSnapMsg(b []byte) (snapMsg, error) {
	bad := errors.New("snapshot is damaged: a message record is malformed")
	var m snapMsg
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
