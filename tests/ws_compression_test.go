package tests

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// With compression on, nats.go's compressed WebSocket connection
// publishes and receives as an uncompressed one does.
func TestWebSocketCompression(t *testing.T) {
	_, wsURL := startWSBus(t, server.Options{WebSocket: server.WebSocketOptions{Compression: true}})
	nc := connect(t, wsURL, nats.Compression(true))
	sub, err := nc.SubscribeSync("z")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("compressible ", 20000)
	if err := nc.Publish("z", []byte(body)); err != nil {
		t.Fatal(err)
	}
	m, err := sub.NextMsg(5 * time.Second)
	if err != nil || string(m.Data) != body {
		t.Fatalf("got %v, %v", m, err)
	}
}

// A compressed message that inflates past the WebSocket message bound (8
// times max_payload) closes the connection with 1009 (message too big)
// instead of growing: CVE-2026-27571's bomb. The bound holds while
// inflating, not after.
func TestWebSocketDecompressionBomb(t *testing.T) {
	s, _ := startWSBus(t, server.Options{MaxPayload: 16 << 10, WebSocket: server.WebSocketOptions{Compression: true}})
	nc, err := net.Dial("tcp", s.WebSocketAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover; server_no_context_takeover\r\n\r\n")
	r := bufio.NewReader(nc)
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols || !strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate") {
		t.Fatalf("compressed upgrade: %v %v", resp, err)
	}
	// 16 MiB of valid publishes (so that only the size bound can stop
	// them), in a frame of well under 1 MiB.
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	_, _ = w.Write([]byte("CONNECT {\"verbose\":false}\r\n"))
	_, _ = w.Write(bytes.Repeat([]byte("PUB a 1\r\nx\r\n"), 16<<20/12))
	_ = w.Flush()
	payload := z.Bytes()
	payload = payload[:len(payload)-4] // permessage-deflate drops the flush's tail
	hdr := []byte{0x80 | 0x40 | 2, 0x80 | 127}
	hdr = binary.BigEndian.AppendUint64(hdr, uint64(len(payload)))
	hdr = append(hdr, 0, 0, 0, 0) // a zero mask: the payload goes as is
	go func() { _, _ = nc.Write(append(hdr, payload...)) }()
	// The server's INFO, then a close frame with 1009.
	var closeCode uint16
	for closeCode == 0 {
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			t.Fatalf("connection ended without a close frame: %v", err)
		}
		n := int(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			_, _ = io.ReadFull(r, l[:])
			n = int(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			_, _ = io.ReadFull(r, l[:])
			n = int(binary.BigEndian.Uint64(l[:]))
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatal(err)
		}
		if h[0]&0x0f == 8 && n >= 2 {
			closeCode = binary.BigEndian.Uint16(p)
		}
	}
	if closeCode != 1009 {
		t.Fatalf("close code %d, want 1009", closeCode)
	}
}
