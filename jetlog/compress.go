package jetlog

import "github.com/klauspost/compress/s2"

// Payload compression (StreamConfig.Compression): each message record's
// payload is s2-encoded when that saves at least an eighth of it; the
// header block and subject stay as they are, so recovery, indexes,
// dedup and TTLs never decode anything. A compressed record says so in
// its header length (compressedFlag). Sizes and limits count the record
// as stored; MaxMsgSize counts the message as published.

// compressMin is the smallest payload worth compressing.
const compressMin = 64

// compress returns the payload to write for data, and whether it is
// compressed. It runs on the appender goroutine (ap.zbuf is its buffer,
// so nothing is allocated once it is grown).
func (l *Log) compress(data []byte) ([]byte, bool) {
	if !l.cfg.Compression || len(data) < compressMin {
		return data, false
	}
	if n := s2.MaxEncodedLen(len(data)); cap(l.ap.zbuf) < n {
		l.ap.zbuf = make([]byte, n)
	}
	out := s2.Encode(l.ap.zbuf[:cap(l.ap.zbuf)], data)
	if len(out) > len(data)-len(data)/8 {
		return data, false
	}
	return out, true
}

// decompress decodes a compressed payload into a new slice.
func decompress(payload []byte) ([]byte, error) {
	return s2.Decode(nil, payload)
}
