package jetlog

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkManyStreams opens b.N streams, all kept open, and appends one
// message to each under a soft limit of 1,024 file descriptors, through
// a FileCache of 512 (issue 11: each stream used to hold two descriptors
// for as long as it was open, so about 500 streams hit the limit):
//
//	go test -run '^$' -bench BenchmarkManyStreams -benchtime 10000x ./jetlog/
func BenchmarkManyStreams(b *testing.B) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		b.Fatal(err)
	}
	lim := old
	lim.Cur = min(1024, old.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			b.Error(err)
		}
	}()
	cache, err := NewFileCache(FileCacheOptions{MaxOpen: 512})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	logs := make([]*Log, 0, b.N)
	defer func() {
		for _, l := range logs {
			if err := l.Close(); err != nil {
				b.Error(err)
			}
		}
	}()
	b.ResetTimer()
	peak := 0
	for i := range b.N {
		name := fmt.Sprintf("s%05d", i)
		l, err := Open(filepath.Join(dir, name), StreamConfig{Name: name}, Options{FileCache: cache, ExpireEvery: -1})
		if err != nil {
			b.Fatalf("stream %d: %v", i, err)
		}
		logs = append(logs, l)
		if _, err := l.Append(Msg{Subject: "s", Data: []byte("x")}, Expect{}); err != nil {
			b.Fatalf("stream %d: %v", i, err)
		}
		if i%256 == 0 {
			peak = max(peak, openFDs())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(max(peak, openFDs())), "fds-peak")
	b.ReportMetric(float64(cache.Stats().Open), "files-open")
}
