package jetstream

import (
	"bytes"
	"iter"

	"github.com/bus-dev/bus/jetlog"
)

// headerValue returns the value of key in a NATS header block
// ("NATS/1.0\r\nKey: Value\r\n\r\n"), matching the key without regard to
// case, and whether it was there with a value (jetlog.HeaderValue, the
// one parser of header blocks).
func headerValue(hdr []byte, key string) (string, bool) {
	v := jetlog.HeaderValue(hdr, key)
	return string(v), v != nil
}

// exactHeaderValue is headerValue with the key matched as written, case
// and all, as the reference matches the Nats-Expected-* headers: a
// "nats-expected-last-sequence" header is no expectation there, and
// nats.go's tests count on it.
func exactHeaderValue(hdr []byte, key string) (string, bool) {
	_, rest, ok := bytes.Cut(hdr, []byte("\r\n"))
	if !ok {
		return "", false
	}
	for k, line := range headerLines(rest) {
		if len(line) == 0 {
			break
		}
		if string(k) == key {
			_, v, _ := bytes.Cut(line, []byte(":"))
			v = bytes.TrimSpace(v)
			return string(v), len(v) > 0
		}
	}
	return "", false
}

// statusHeader builds a status-only header block such as
// "NATS/1.0 408 Request Timeout\r\nNats-Pending-Messages: 4\r\n\r\n".
// kv holds header names and values in turn.
func statusHeader(status string, kv ...string) []byte {
	b := make([]byte, 0, 64)
	b = append(b, "NATS/1.0"...)
	if status != "" {
		b = append(b, ' ')
		b = append(b, status...)
	}
	b = append(b, "\r\n"...)
	return appendHeaderLines(b, kv)
}

// appendHeaderLines appends "name: value" lines (kv holds names and
// values in turn) and the blank line that ends a header block.
func appendHeaderLines(b []byte, kv []string) []byte {
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, kv[i]...)
		b = append(b, ": "...)
		b = append(b, kv[i+1]...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

// withHeader returns a copy of the header block hdr (or a new one) with
// "key: value" added.
func withHeader(hdr []byte, key, value string) []byte { return withHeaders(hdr, key, value) }

// withHeaders is withHeader for several headers at once (kv holds names
// and values in turn), in one copy.
func withHeaders(hdr []byte, kv ...string) []byte {
	n := len(hdr) + 16
	for _, s := range kv {
		n += len(s) + 2
	}
	out := make([]byte, 0, n)
	if len(hdr) > 4 {
		out = append(out, hdr[:len(hdr)-2]...) // without the closing blank line
	} else {
		out = append(out, "NATS/1.0\r\n"...)
	}
	return appendHeaderLines(out, kv)
}

// withoutHeaders returns a copy of the header block hdr without the
// headers drop selects (by name); nil if none are left.
func withoutHeaders(hdr []byte, drop func(key []byte) bool) []byte {
	if len(hdr) == 0 {
		return nil
	}
	status, rest, ok := bytes.Cut(hdr, []byte("\r\n"))
	if !ok {
		return nil
	}
	out := append(make([]byte, 0, len(hdr)), status...)
	out = append(out, "\r\n"...)
	kept := 0
	for key, line := range headerLines(rest) {
		if key == nil || drop(key) {
			continue
		}
		out = append(append(out, line...), "\r\n"...)
		kept++
	}
	if kept == 0 && string(status) == "NATS/1.0" {
		return nil // nothing left worth a header block
	}
	return append(out, "\r\n"...)
}

// headerLines yields the name (trimmed; nil for a line without a colon)
// and the whole line of each header in the lines of a block after its
// status line.
func headerLines(rest []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, line []byte) bool) {
		for len(rest) > 0 {
			var line []byte
			line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
			var key []byte
			if k, _, ok := bytes.Cut(line, []byte(":")); ok {
				key = bytes.TrimSpace(k)
			}
			if !yield(key, line) {
				return
			}
		}
	}
}
