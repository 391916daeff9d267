package jetstream

import (
	"bytes"

	"github.com/bus-dev/bus/header"
)

// headerValue returns the value of key in a NATS header block, matching
// the key without regard to case, and whether it was there with a value.
func headerValue(hdr []byte, key string) (string, bool) {
	v := header.Value(hdr, key)
	return string(v), v != nil
}

// exactHeaderValue is headerValue with the key matched as written, case
// and all, as the reference matches the Nats-Expected-* headers: a
// "nats-expected-last-sequence" header is no expectation there, and
// nats.go's tests count on it.
func exactHeaderValue(hdr []byte, key string) (string, bool) {
	v := header.ExactValue(hdr, key)
	return string(v), v != nil
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
	status, _, ok := bytes.Cut(hdr, []byte("\r\n"))
	if !ok {
		return nil
	}
	out := append(make([]byte, 0, len(hdr)), status...)
	out = append(out, "\r\n"...)
	kept := 0
	for key, line := range header.Lines(hdr) {
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
