package jetlog

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// File descriptors follow the working set (issue #30): a restart of many
// idle streams holds none of their files before something is read, and
// files read once are closed again once idle for CloseIdleAfter.
func TestFileCacheOpensOnUseAndClosesIdleFiles(t *testing.T) {
	// Not parallel: it counts the process's descriptors.
	if openFDs() < 0 {
		t.Skip("no /proc/self/fd")
	}
	const streams = 100
	dir := t.TempDir()
	newCache := func() *FileCache {
		c, err := NewFileCache(FileCacheOptions{MaxOpen: 1024, CloseIdleAfter: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		})
		return c
	}
	open := func(cache *FileCache) []*Log {
		var logs []*Log
		for i := range streams {
			l, err := Open(filepath.Join(dir, fmt.Sprint(i)), StreamConfig{Name: fmt.Sprint(i)}, Options{SegmentSize: 200, FileCache: cache, ExpireEvery: -1})
			if err != nil {
				t.Fatal(err)
			}
			logs = append(logs, l)
		}
		return logs
	}
	closeAll := func(logs []*Log) {
		for _, l := range logs {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := openFDs()
	logs := open(newCache())
	for i, l := range logs {
		for j := range 2 { // two segments each
			msg := Msg{Subject: "s", Data: fmt.Appendf(nil, "payload-%d-%d-%0100d", i, j, 0)}
			if _, err := l.AppendBatch([]Msg{msg, msg}, Expect{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeAll(logs)

	cache := newCache()
	logs = open(cache)
	defer closeAll(logs)
	if n := openFDs() - base; n > 4 {
		t.Errorf("%d streams just opened hold %d descriptors, want none of their files (stats %+v)", streams, n, cache.Stats())
	}
	for _, l := range logs {
		if m := mustGet(t, l, 1); m.Subject != "s" {
			t.Fatalf("Get(1) = %+v", m)
		}
	}
	if st := cache.Stats(); st.Open+int(st.ClosedIdle) < streams/2 {
		t.Errorf("reads opened too little: %+v", st)
	}
	eventually(t, 5*time.Second, func() bool { return cache.Stats().Open == 0 })
	if n := openFDs() - base; n > 4 {
		t.Errorf("after the reads went idle %d descriptors are open (stats %+v)", n, cache.Stats())
	}
	// Idle files reopen on use.
	if m := mustGet(t, logs[7], 2); m.Seq != 2 {
		t.Fatalf("Get(2) after the idle close = %+v", m)
	}
}
