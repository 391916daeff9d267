package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// wsFrame builds one client frame: masked unless mask is zero.
func wsFrame(fin bool, opcode byte, payload []byte, mask uint32) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	m := byte(0)
	if mask != 0 {
		m = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		out = append(out, m|byte(n))
	case n < 1<<16:
		out = append(out, m|126, byte(n>>8), byte(n))
	default:
		out = append(out, m|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	if mask == 0 {
		return append(out, payload...)
	}
	key := binary.BigEndian.AppendUint32(nil, mask)
	out = append(out, key...)
	for i, c := range payload {
		out = append(out, c^key[i%4])
	}
	return out
}

func wsCloseFrame(code uint16, reason string) []byte {
	return wsFrame(true, 8, append(binary.BigEndian.AppendUint16(nil, code), reason...), 0x01020304)
}

// wsFuzzSeeds are inputs after the upgrade: whole and fragmented
// messages, control frames between fragments, bad masking, bad opcodes,
// oversized control frames, close codes valid and not, and a length
// that claims far more than is sent.
func wsFuzzSeeds() [][]byte {
	const k = 0x37fa213d
	connect := []byte("CONNECT {\"verbose\":false}\r\nPING\r\n")
	pub := []byte("PUB a 5\r\nhello\r\nSUB a 1\r\nPING\r\n")
	cat := func(fs ...[]byte) []byte {
		var out []byte
		for _, f := range fs {
			out = append(out, f...)
		}
		return out
	}
	huge := []byte{0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 'x'}
	return [][]byte{
		wsFrame(true, 2, connect, k),
		cat(wsFrame(true, 2, connect, k), wsFrame(true, 2, pub, k)),
		cat(wsFrame(false, 2, connect[:5], k), wsFrame(true, 0, connect[5:], k)),
		cat(wsFrame(false, 2, pub[:3], k), wsFrame(true, 9, []byte("ping"), k), wsFrame(true, 0, pub[3:], k)),
		cat(wsFrame(true, 2, connect, k), wsFrame(true, 10, nil, k)),
		wsFrame(true, 1, connect, k),                      // text instead of binary
		wsFrame(true, 2, connect, 0),                      // unmasked
		wsFrame(true, 3, connect, k),                      // reserved opcode
		wsFrame(false, 9, []byte("fragmented ping"), k),   // control frames may not be fragmented
		wsFrame(true, 9, make([]byte, 126), k),            // control frame over 125 bytes
		wsFrame(true, 0, connect, k),                      // continuation without a start
		{0xc2, 0x85, 1, 2, 3, 4, 'a', 'b', 'c', 'd', 'e'}, // RSV1 without compression
		wsCloseFrame(1000, "bye"),
		wsCloseFrame(1005, ""), // may not be sent
		wsCloseFrame(999, "out of range"),
		wsCloseFrame(4000, "private"),
		wsFrame(true, 8, []byte{3}, k), // one-byte close payload
		wsCloseFrame(1000, "\xff\xfe"), // reason not UTF-8
		huge,
		wsFrame(true, 2, make([]byte, 70000), k), // 64-bit length
	}
}

// FuzzWebSocketInput sends any bytes to a live WebSocket listener, after
// an upgrade or as the upgrade request itself, then half-closes: the
// server must neither panic nor hang, and must hang up. Memory stays
// bounded whatever a frame's header claims: the library reads messages
// as a stream and the server bounds each at wsMaxMessage.
func FuzzWebSocketInput(f *testing.F) {
	for _, s := range wsFuzzSeeds() {
		f.Add(true, s)
	}
	f.Add(false, []byte("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n\x82\x80\x00\x00\x00\x00"))
	f.Add(false, []byte("GET /leafnode HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add(false, []byte("GET / HTTP/1.1\r\nHost: x\r\nOrigin: http://[::1\r\n\r\n"))
	f.Add(false, []byte("\x16\x03\x01\x00\x05hello"))
	f.Add(false, []byte("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"+
		"Cookie: u=\"a;b\"; p=; t=\x00; u=again\r\n\r\n\x82\x80\x00\x00\x00\x00"))

	s, err := New(Options{Host: "127.0.0.1", MaxPayload: 64 << 10,
		Authorization: Authorization{Users: []User{{Name: "a", Password: "b"}}},
		WebSocket: WebSocketOptions{Port: -1, Host: "127.0.0.1", NoTLS: true, SameOrigin: true, AllowedOrigins: []string{"http://x"}, HandshakeTimeout: time.Second,
			UserCookie: "u", PassCookie: "p", TokenCookie: "t", Headers: map[string]string{"X-A": "b"}, NoAuthUser: "a"}})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Start(); err != nil {
		f.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			f.Error(err)
		}
	}()
	addr := s.WebSocketAddr().String()
	f.Fuzz(func(t *testing.T, upgraded bool, in []byte) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(nc)
		if upgraded {
			_, _ = io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
			resp, err := http.ReadResponse(r, nil)
			if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %v %v", resp, err)
			}
		}
		_, _ = nc.Write(in) // the server may hang up first
		_ = nc.(*net.TCPConn).CloseWrite()
		if _, err := io.Copy(io.Discard, r); err != nil && !isReset(err) {
			t.Fatalf("server did not hang up: %v", err)
		}
	})
}

// isReset says the server closed with unread input, which is a hang-up.
func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}
