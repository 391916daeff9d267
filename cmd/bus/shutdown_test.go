package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeServer stands in for *server.Server so the shutdown paths can be
// driven exactly.
type fakeServer struct {
	startErr    error
	shutdownErr error
	release     chan struct{}        // if not nil, Shutdown waits until it is closed
	shutdownCtx chan context.Context // receives Shutdown's context; capacity 1
	reloads     chan struct{}        // receives one value per ReloadTLS; capacity 4
	reloadErr   error
}

func newFakeServer() *fakeServer {
	return &fakeServer{shutdownCtx: make(chan context.Context, 1), reloads: make(chan struct{}, 4)}
}

func (f *fakeServer) Start() error        { return f.startErr }
func (f *fakeServer) Addr() net.Addr      { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4222} }
func (f *fakeServer) HTTPAddr() net.Addr  { return nil }
func (f *fakeServer) HTTPSAddr() net.Addr { return nil }
func (f *fakeServer) ReloadTLS() error    { f.reloads <- struct{}{}; return f.reloadErr }

func (f *fakeServer) Shutdown(ctx context.Context) error {
	f.shutdownCtx <- ctx
	if f.release != nil {
		<-f.release
	}
	return f.shutdownErr
}

// syncBuffer is a bytes.Buffer safe for the logger and the test at once.
type syncBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serveAsync runs serve in a goroutine and returns its logs, the signal
// channel it waits on and a channel delivering its result.
func serveAsync(t *testing.T, srv runner) (*syncBuffer, chan<- os.Signal, <-chan error) {
	t.Helper()
	logs := &syncBuffer{}
	sigs := make(chan os.Signal, 2)
	result := make(chan error, 1)
	go func() { result <- serve(srv, slog.New(slog.NewTextHandler(logs, nil)), sigs) }()
	return logs, sigs, result
}

func waitResult(t *testing.T, result <-chan error) error {
	t.Helper()
	select {
	case err := <-result:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("serve did not return")
		return nil
	}
}

func TestServeShutsDownWithBoundedContext(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	logs, sigs, result := serveAsync(t, srv)
	sigs <- syscall.SIGTERM
	ctx := <-srv.shutdownCtx
	deadline, ok := ctx.Deadline()
	if !ok || time.Until(deadline) > shutdownTimeout {
		t.Errorf("Shutdown context deadline %v (set %v), want within %v", deadline, ok, shutdownTimeout)
	}
	if err := waitResult(t, result); err != nil {
		t.Fatalf("serve = %v, want nil", err)
	}
	for _, want := range []string{"msg=serving client=127.0.0.1:4222 monitoring=disabled", "signal=terminated", "msg=stopped"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs do not contain %q:\n%s", want, logs)
		}
	}
}

func TestServeShutdownErrorExitsOne(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	srv.shutdownErr = context.DeadlineExceeded
	_, sigs, result := serveAsync(t, srv)
	sigs <- os.Interrupt
	err := waitResult(t, result)
	if exitCode(err) != exitFailure || !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "shutdown: ") {
		t.Errorf("serve = %v (exit %d), want shutdown error with exit %d", err, exitCode(err), exitFailure)
	}
}

func TestServeSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	srv.release = make(chan struct{})
	t.Cleanup(func() { close(srv.release) }) // lets the abandoned Shutdown return
	_, sigs, result := serveAsync(t, srv)
	sigs <- syscall.SIGTERM
	<-srv.shutdownCtx // shutdown is now stuck
	sigs <- os.Interrupt
	err := waitResult(t, result)
	if exitCode(err) != exitFailure || !strings.Contains(err.Error(), "interrupt during shutdown") {
		t.Errorf("serve = %v (exit %d), want exit %d naming the second signal", err, exitCode(err), exitFailure)
	}
}

func TestServeStartErrorExitsOne(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	srv.startErr = errors.New("server: listen on 0.0.0.0:4222: address already in use")
	_, _, result := serveAsync(t, srv)
	err := waitResult(t, result)
	if exitCode(err) != exitFailure || !strings.Contains(err.Error(), "start: server: listen") {
		t.Errorf("serve = %v (exit %d), want start error with exit %d", err, exitCode(err), exitFailure)
	}
	select {
	case <-srv.shutdownCtx:
		t.Error("Shutdown called after a failed Start")
	default:
	}
}

// SIGHUP reloads the TLS files and keeps serving, whether the reload
// works or not; it does not cut a shutdown short either.
func TestServeReloadsTLSOnHangup(t *testing.T) {
	t.Parallel()
	for _, reloadErr := range []error{nil, errors.New("bad key")} {
		srv := newFakeServer()
		srv.reloadErr = reloadErr
		logs, sigs, result := serveAsync(t, srv)
		sigs <- syscall.SIGHUP
		<-srv.reloads
		sigs <- syscall.SIGTERM
		<-srv.shutdownCtx
		if err := waitResult(t, result); err != nil {
			t.Fatalf("serve = %v", err)
		}
		want := "tls reloaded"
		if reloadErr != nil {
			want = "tls reload failed"
		}
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

func TestServeHangupDuringShutdownWaits(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	srv.release = make(chan struct{})
	_, sigs, result := serveAsync(t, srv)
	sigs <- syscall.SIGTERM
	<-srv.shutdownCtx
	sigs <- syscall.SIGHUP
	close(srv.release)
	if err := waitResult(t, result); err != nil {
		t.Fatalf("serve = %v, want a clean shutdown", err)
	}
}
