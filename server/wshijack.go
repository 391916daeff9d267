package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// The buffers an upgraded WebSocket connection keeps for its life: the
// frame layer reads frame headers through the reader and writes each
// frame through the writer. net/http hands over 4 KiB of each at the
// hijack, 8 KiB an idle connection does not need (bus's parser and
// outbound have their own): a frame up to wsWriteBuffer bytes still
// leaves in one write, a larger one in two.
const (
	wsReadBuffer  = 1024
	wsWriteBuffer = 2048
)

// wsSmallBuffers is a ResponseWriter whose Hijack gives the frame layer
// small buffers in place of net/http's. What the client sent after the
// upgrade request (already read into net/http's buffer) is copied into
// the new reader, so nothing keeps the old buffer alive.
type wsSmallBuffers struct {
	http.ResponseWriter
}

func (w wsSmallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	nc, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	pending, _ := brw.Reader.Peek(brw.Reader.Buffered())
	if len(pending) > wsReadBuffer {
		return nc, brw, nil // a client that raced ahead: keep what holds it
	}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(pending)), nc), wsReadBuffer)
	if len(pending) > 0 {
		// Into br's own buffer, where the frame layer looks for bytes
		// read ahead; the first read returns them all, so this never
		// waits on the socket.
		if _, err := br.Peek(len(pending)); err != nil {
			return nil, nil, err
		}
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, wsWriteBuffer)), nil
}
