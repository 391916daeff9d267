package server

import (
	"syscall"
	"unsafe"
)

// directWriter writes a TCP socket from a reader goroutine without ever
// waiting for it (see inline.go). One goroutine uses it at a time: the
// one that set its queue's flushing flag.
type directWriter struct {
	rc    syscall.RawConn
	taken []*chunk // what is being written, reused
	iov   []syscall.Iovec
	n     int                   // bytes the last writev took
	fn    func(fd uintptr) bool // d.writev, bound once so a write allocates nothing
}

// newDirectWriter returns nil when the socket cannot be written raw.
func newDirectWriter(sc syscall.Conn) *directWriter {
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	d := &directWriter{rc: rc}
	d.fn = d.writev
	return d
}

// write tries one non-blocking writev of the chunks and returns how many
// bytes the socket took: 0 when it is full, closed, failed or past its
// write deadline, all of which the writer then meets and handles.
func (d *directWriter) write(chunks []*chunk) int {
	d.iov = d.iov[:0]
	for _, c := range chunks {
		v := syscall.Iovec{Base: unsafe.SliceData(c.b)}
		v.SetLen(len(c.b))
		d.iov = append(d.iov, v)
	}
	d.n = 0
	if err := d.rc.Write(d.fn); err != nil {
		return 0
	}
	return d.n
}

// writev is the raw write; returning true tells the runtime not to wait
// for the socket to become writable, even on EAGAIN.
func (d *directWriter) writev(fd uintptr) bool {
	n, _, errno := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(unsafe.SliceData(d.iov))), uintptr(len(d.iov)))
	if errno == 0 {
		d.n = int(n)
	}
	return true
}
