package jetstream

import (
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Storage limits for the whole server (Options.MaxMemory, MaxStorage), as
// nats-server's max_memory_store and max_file_store: a stream whose
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
	svc.sh.memoryFull.Store(svc.maxMemory > 0 && memory >= uint64(svc.maxMemory))
	svc.sh.storageFull.Store(svc.maxStorage > 0 && file >= uint64(svc.maxStorage))
}

// full reports whether the server's limit for the stream's storage kind
// is used up (the publish path: one atomic load).
func (st *stream) full() bool {
	if st.memory {
		return st.sh.memoryFull.Load()
	}
	return st.sh.storageFull.Load()
}

func errAccountResources() *apiError {
	return newAPIError(400, 10002, "resource limits exceeded for account")
}

// reserve refuses a new stream beyond the account's max_streams, and
// one whose max_bytes would not fit in what the limit of its storage
// kind leaves, as the reference reserves them.
func (svc *Service) reserve(cfg streamConfig, replacing *stream) *apiError {
	if limit := svc.account.MaxStreams; replacing == nil && limit > 0 && svc.numStreams() >= limit {
		return errMaxStreams()
	}
	if !svc.reservesBytes(cfg) {
		return nil
	}
	limit := svc.storageLimit(cfg)
	refuse := newAPIError(500, 10047, "insufficient storage resources available")
	if cfg.Storage == jetlog.StorageMemory {
		refuse = newAPIError(500, 10028, "insufficient memory resources available")
	}
	var reserved int64
	for _, st := range svc.sortedStreams() {
		c := st.config()
		if st == replacing || c.Storage != cfg.Storage || c.MaxBytes <= 0 {
			continue
		}
		reserved += c.MaxBytes
	}
	if reserved+cfg.MaxBytes > limit {
		return refuse
	}
	return nil
}

// limited reports whether a stream with cfg counts against a storage
// limit or the account's max_streams, so that creating or updating it
// must hold limitsMu.
func (svc *Service) limited(cfg streamConfig) bool {
	return svc.reservesBytes(cfg) || svc.account.MaxStreams > 0
}

// reservesBytes reports whether a stream with cfg counts against a
// storage limit.
func (svc *Service) reservesBytes(cfg streamConfig) bool {
	return svc.storageLimit(cfg) > 0 && cfg.MaxBytes > 0
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
	if cfg.Storage == jetlog.StorageMemory {
		return svc.maxMemory
	}
	return svc.maxStorage
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
	return svc.limitsMu.Unlock
}
