package jetstream

import "sync"

// closeParallel is how many streams close at once at shutdown. A close
// is mostly waiting for its fsyncs (the active segment, its index, the
// seq mark, the snapshots, the clean marker, each file's directory), so
// one after the other 1,025 streams took longer than the 10 s a service
// manager allows; a few at a time let the disk take them together.
const closeParallel = 16

func (svc *Service) closeStreams() {
	svc.mu.Lock()
	streams := svc.streams
	svc.streams = map[string]*stream{}
	svc.mu.Unlock()
	var wg sync.WaitGroup
	turns := make(chan struct{}, closeParallel)
	for _, st := range streams {
		turns <- struct{}{}
		wg.Go(func() {
			defer func() { <-turns }()
			if err := st.close("409 Server Shutdown"); err != nil {
				svc.sh.log.Error("close stream", "stream", st.name, "err", err)
			}
		})
	}
	wg.Wait()
	if svc.files != nil {
		if err := svc.files.Close(); err != nil {
			svc.sh.log.Error("release the store lock", "err", err)
		}
		svc.files = nil
	}
	if svc.caches == nil {
		_ = svc.sh.index.Close() // waits for a hand-back of freed memory; no error
	}
}
