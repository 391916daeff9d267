package tests

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/server"
)

// wsMasked is one masked binary frame holding p, as a client sends it.
func wsMasked(p []byte) []byte {
	key := [4]byte{7, 1, 9, 3}
	var f []byte
	switch n := len(p); {
	case n < 126:
		f = []byte{0x82, 0x80 | byte(n)}
	case n < 1<<16:
		f = binary.BigEndian.AppendUint16([]byte{0x82, 0x80 | 126}, uint16(n))
	default:
		f = binary.BigEndian.AppendUint64([]byte{0x82, 0x80 | 127}, uint64(n))
	}
	f = append(f, key[:]...)
	for i, b := range p {
		f = append(f, b^key[i%4])
	}
	return f
}

// wsReadUntil reads the server's frames from r until their payloads hold
// want, and returns what they held.
func wsReadUntil(r *bufio.Reader, want string) (string, error) {
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return got.String(), err
		}
		n := int(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return got.String(), err
			}
			n = int(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			if _, err := io.ReadFull(r, l[:]); err != nil {
				return got.String(), err
			}
			n = int(binary.BigEndian.Uint64(l[:]))
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(r, p); err != nil {
			return got.String(), err
		}
		got.Write(p)
	}
	return got.String(), nil
}

// TestWebSocketFramesWithTheUpgrade: a client that sends its first frames
// in the same write as the upgrade request, before the 101 (RFC 6455
// 4.1 says it must wait; a hurried client does not), is served. bus
// hands the frame layer small buffers of its own after the upgrade
// (server/wshijack.go), so the bytes read with the request must be
// carried over, whether they fit those buffers or not. Bus only: the
// reference drops such a connection after its 101.
func TestWebSocketFramesWithTheUpgrade(t *testing.T) {
	t.Parallel()
	s, _ := startWSBus(t, server.Options{WebSocket: server.WebSocketOptions{NoTLS: true, Port: -1}})
	long := "PUB x " + "3000\r\n" + strings.Repeat("z", 3000) + "\r\n"
	for name, ops := range map[string]string{
		"small": "CONNECT {\"verbose\":false}\r\nPING\r\n",
		"large": "CONNECT {\"verbose\":false}\r\n" + long + "PING\r\n",
	} {
		{
			addr := s.WebSocketAddr().String()
			nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
			if _, err := nc.Write(append([]byte(req), wsMasked([]byte(ops))...)); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(nc)
			resp, err := http.ReadResponse(r, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("%s: upgrade %v %v", name, resp, err)
			}
			got, err := wsReadUntil(r, "PONG\r\n")
			if err != nil || !strings.HasPrefix(got, "INFO ") || strings.Contains(got, "-ERR") {
				t.Errorf("%s: %q %v", name, got, err)
			}
			_ = nc.Close()
		}
	}
}
