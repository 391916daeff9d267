//go:build !windows && !plan9 && !js && !wasip1

package main

import (
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/conf"
)

// remote_syslog sends each record as a syslog message tagged bus, at the
// priority of its level (daemon facility: info 30, warning 28), without
// a time of its own.
func TestRemoteSyslogSendsRecords(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	cfg := conf.Default()
	cfg.RemoteSyslog = "udp://" + pc.LocalAddr().String()
	sink, err := openLogSink(cfg, os.Stderr, slog.LevelInfo)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.discard()
	log := slog.New(sink.handler).With("cid", 3)
	log.Debug("hidden")
	log.Info("hello", "k", 1)
	log.Warn("careful")
	for _, want := range []string{"<30>", "<28>"} {
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2048)
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		msg := string(buf[:n])
		if !strings.HasPrefix(msg, want) || !strings.Contains(msg, " bus[") || !strings.Contains(msg, "cid=3") || strings.Contains(msg, "time=") {
			t.Errorf("syslog message %q, want priority %s, tag bus, the attributes and no time=", msg, want)
		}
	}
}
