package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Storage limits of one service (Options.MaxMemory, MaxStorage): the
// server's max_memory_store and max_file_store for the global account's,
// an account's max_memory and max_file for its own, and beside them the
// server's bound over every account (Options.Pool, pool.go). A stream whose
// max_bytes would not fit in what is left is refused at create, and while
// the streams together hold more than the limit a publish to a stream of
// that storage kind is refused with the reference's error. The totals are
// summed from the streams' states once a second (limitCheckEvery), so a
// burst may overshoot by a second's worth of appends; nothing is paid per
// message but one atomic load.

const limitCheckEvery = time.Second

// limitWatch keeps the full flags up to date while limits are set.
func (svc *Service) limitWatch() {
	defer svc.workers.Done()
	t := time.NewTicker(limitCheckEvery)
	defer t.Stop()
	for {
		svc.checkLimits()
		select {
		case <-t.C:
		case <-svc.stop:
			return
		}
	}
}

// usage sums the bytes of the memory and the file streams.
func (svc *Service) usage() (memory, file uint64) {
	for _, st := range svc.sortedStreams() {
		b := st.log.State().Bytes
		if st.config().Storage == jetlog.StorageMemory {
			memory += b
		} else {
			file += b
		}
	}
	return memory, file
}

func (svc *Service) checkLimits() {
	memory, file := svc.usage()
	b := svc.sh.bound()
	svc.sh.memoryFull.Store(b.maxMemory > 0 && memory >= uint64(b.maxMemory))
	svc.sh.storageFull.Store(b.maxStorage > 0 && file >= uint64(b.maxStorage))
	if svc.sh.pool != nil {
		svc.usedMemory.Store(memory)
		svc.usedStorage.Store(file)
		svc.sh.pool.refresh()
	}
}

// full reports whether the service's limit or the pool's for the
// stream's storage kind is used up (the publish path: an atomic load or
// two).
func (st *stream) full() bool {
	if st.memory {
		return st.sh.memoryFull.Load() || st.sh.pool.full(true)
	}
	return st.sh.storageFull.Load() || st.sh.pool.full(false)
}

// fullError is the refusal of a publish to a full stream: the account's
// limit's, or the server's when only the pool is used up.
func (st *stream) fullError() *apiError {
	own := st.sh.storageFull.Load()
	if st.memory {
		own = st.sh.memoryFull.Load()
	}
	if !own && st.sh.pool.full(st.memory) {
		return errServerResources()
	}
	return errAccountResources()
}

func errAccountResources() *apiError {
	return newAPIError(400, 10002, "resource limits exceeded for account")
}

// reserve refuses a new stream beyond the account's max_streams, and
// one whose max_bytes would not fit in what the limit of its storage
// kind leaves, as the reference reserves them.
func (svc *Service) reserve(cfg streamConfig, replacing *stream) *apiError {
	if limit := svc.sh.bound().account.MaxStreams; replacing == nil && limit > 0 && svc.numStreams() >= limit {
		return errMaxStreams()
	}
	if !svc.reservesBytes(cfg) {
		return nil
	}
	refuse := newAPIError(500, 10047, "insufficient storage resources available")
	if cfg.Storage == jetlog.StorageMemory {
		refuse = newAPIError(500, 10028, "insufficient memory resources available")
	}
	if limit := svc.storageLimit(cfg); limit > 0 && svc.reservedBytes(cfg.Storage, replacing)+cfg.MaxBytes > limit {
		return refuse
	}
	pool := svc.sh.pool
	if limit := pool.limit(cfg); limit > 0 && pool.reserved(cfg.Storage, replacing)+cfg.MaxBytes > limit {
		return refuse
	}
	return nil
}

// reservedBytes sums the max_bytes the streams of storage kind reserve,
// replacing (a stream being updated) left out.
func (svc *Service) reservedBytes(storage jetlog.Storage, replacing *stream) int64 {
	var reserved int64
	for _, st := range svc.sortedStreams() {
		c := st.config()
		if st == replacing || c.Storage != storage || c.MaxBytes <= 0 {
			continue
		}
		reserved += c.MaxBytes
	}
	return reserved
}

// limited reports whether a stream with cfg counts against a storage
// limit or the account's max_streams, so that creating or updating it
// must hold limitsMu.
func (svc *Service) limited(cfg streamConfig) bool {
	return svc.reservesBytes(cfg) || svc.sh.bound().account.MaxStreams > 0
}

// reservesBytes reports whether a stream with cfg counts against a
// storage limit.
func (svc *Service) reservesBytes(cfg streamConfig) bool {
	return (svc.storageLimit(cfg) > 0 || svc.sh.pool.limit(cfg) > 0) && cfg.MaxBytes > 0
}

// numStreams counts the streams, the damaged ones too (their names are
// taken).
func (svc *Service) numStreams() int {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	return len(svc.streams) + len(svc.damaged)
}

// storageLimit is the limit of cfg's storage kind; 0 for none.
func (svc *Service) storageLimit(cfg streamConfig) int64 {
	b := svc.sh.bound()
	if cfg.Storage == jetlog.StorageMemory {
		return b.maxMemory
	}
	return b.maxStorage
}

// lockLimits holds limitsMu while a create or update of a stream with cfg
// checks its reservation and takes effect: without it two changes in
// different lanes could each fit alone and together not. It returns the
// unlock, a no-op when no limit applies.
func (svc *Service) lockLimits(cfg streamConfig) func() {
	if !svc.limited(cfg) {
		return func() {}
	}
	svc.limitsMu.Lock()
	if pool := svc.sh.pool; pool.limit(cfg) > 0 && cfg.MaxBytes > 0 {
		pool.reserving.Lock()
		return func() {
			pool.reserving.Unlock()
			svc.limitsMu.Unlock()
		}
	}
	return svc.limitsMu.Unlock
}
