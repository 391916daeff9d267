package jetlog

import "bytes"

// msgIDHeader is the header that carries a message's dedup id.
const msgIDHeader = "Nats-Msg-Id"

// msgID returns the value of the Nats-Msg-Id header, or nil.
func msgID(hdr []byte) []byte { return HeaderValue(hdr, msgIDHeader) }

// HeaderValue returns the value of key in a NATS header block
// ("NATS/1.0\r\nKey: Value\r\n\r\n"), trimmed, or nil if it is absent or
// empty. The key matches without regard to case. The result aliases hdr.
// It never panics on malformed input. It is the one parser of header
// blocks in the server (the JetStream layer uses it too).
func HeaderValue(hdr []byte, key string) []byte {
	if len(hdr) == 0 {
		return nil
	}
	// Skip the status line.
	i := bytes.Index(hdr, []byte("\r\n"))
	if i < 0 {
		return nil
	}
	rest := hdr[i+2:]
	for len(rest) > 0 {
		j := bytes.Index(rest, []byte("\r\n"))
		line := rest
		if j >= 0 {
			line, rest = rest[:j], rest[j+2:]
		} else {
			rest = nil
		}
		if len(line) == 0 {
			break
		}
		k := bytes.IndexByte(line, ':')
		if k < 0 {
			continue
		}
		if bytes.EqualFold(bytes.TrimSpace(line[:k]), []byte(key)) {
			v := bytes.TrimSpace(line[k+1:])
			if len(v) == 0 {
				return nil
			}
			return v
		}
	}
	return nil
}
