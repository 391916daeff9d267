package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// The WebSocket scenarios: pub→sub through each server's websocket
// listener with nats.go's ws:// client (compressed or not; natscli has
// no WebSocket compression switch), and the memory of idle WebSocket
// connections (idleConns through dialWS) beside the TCP figure of the RSS row.

// wsPubSub is one nats.go subscriber and one publisher over ws://.
type wsPubSub struct {
	n, size     int
	compression bool // permessage-deflate, which both servers offer
}

func (w wsPubSub) run(ctx context.Context, e *env) ([]float64, error) {
	e.note(fmt.Sprintf("(in process) nats.go over ws://, compression %v: one subscriber, one publisher, %d messages of %d B", w.compression, w.n, w.size))
	opts := []nats.Option{nats.Compression(w.compression), nats.Timeout(10 * time.Second), nats.NoReconnect()}
	sub, err := nats.Connect(e.srv.wsURL, opts...)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	pub, err := nats.Connect(e.srv.wsURL, opts...)
	if err != nil {
		return nil, err
	}
	defer pub.Close()
	var got atomic.Int64 // the callback's goroutine counts, this one reads
	done := make(chan struct{})
	s, err := sub.Subscribe("bench.ws", func(*nats.Msg) {
		if got.Add(1) == int64(w.n) {
			close(done)
		}
	})
	if err != nil {
		return nil, err
	}
	if err := s.SetPendingLimits(-1, -1); err != nil {
		return nil, err
	}
	if err := sub.Flush(); err != nil {
		return nil, err
	}
	if err := e.beginMeasure(); err != nil {
		return nil, err
	}
	msg := make([]byte, w.size)
	start := time.Now()
	for range w.n {
		if err := pub.Publish("bench.ws", msg); err != nil {
			return nil, err
		}
	}
	if err := pub.Flush(); err != nil {
		return nil, err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("subscriber got %d of %d messages (slow consumer?): %w", got.Load(), w.n, ctx.Err())
	}
	return []float64{float64(w.n) / time.Since(start).Seconds()}, nil
}

// dialWS is dialRaw through a WebSocket upgrade: the protocol lines go
// in masked binary frames and come out of the server's frames.
func dialWS(ctx context.Context, wsURL string) (*rawConn, error) {
	addr := strings.TrimPrefix(wsURL, "ws://")
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReaderSize(c, 4096)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err == nil && resp.StatusCode != http.StatusSwitchingProtocols {
		err = fmt.Errorf("upgrade answered %s", resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	fc := &wsFramed{Conn: c, br: br}
	rc := &rawConn{c: fc, r: bufio.NewReaderSize(fc, 4096), w: bufio.NewWriterSize(fc, 4096)}
	if err := rc.handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return rc, nil
}

// wsFramed is a client's side of a WebSocket stream: each Write is one
// masked binary frame (a zero key: the bytes as they are), Read returns
// the payloads of the server's data frames. Control frames other than
// close are skipped. Not safe for concurrent use.
type wsFramed struct {
	net.Conn
	br   *bufio.Reader
	left int64 // payload bytes of the current frame not yet read
}

func (f *wsFramed) Write(p []byte) (int, error) {
	hdr := []byte{0x82}
	switch n := len(p); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n <= 0xffff:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr = append(hdr, 0, 0, 0, 0)
	if _, err := f.Conn.Write(append(hdr, p...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (f *wsFramed) Read(p []byte) (int, error) {
	for f.left == 0 {
		var h [2]byte
		if _, err := io.ReadFull(f.br, h[:]); err != nil {
			return 0, err
		}
		n := int64(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			if _, err := io.ReadFull(f.br, l[:]); err != nil {
				return 0, err
			}
			n = int64(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			if _, err := io.ReadFull(f.br, l[:]); err != nil {
				return 0, err
			}
			n = int64(binary.BigEndian.Uint64(l[:]))
		}
		switch op := h[0] & 0x0f; {
		case op == 8:
			return 0, errors.New("websocket closed by the server")
		case op >= 8: // ping, pong: not the stream's
			if _, err := f.br.Discard(int(n)); err != nil {
				return 0, err
			}
		default:
			f.left = n
		}
	}
	p = p[:min(int64(len(p)), f.left)]
	n, err := f.br.Read(p)
	f.left -= int64(n)
	return n, err
}
