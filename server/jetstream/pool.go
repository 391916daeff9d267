package jetstream

import (
	"sync"
	"sync/atomic"

	"github.com/bus-dev/bus/jetlog"
)

// Pool is the server-wide storage bound that the services of several
// accounts share: nats-server's max_memory_store and max_file_store,
// which bound every account's streams together. As the reference does,
// a stream whose max_bytes would not fit in what the streams of every
// account have reserved is refused at create (10028, 10047), and while
// the streams of all accounts hold more than the bound a publish is
// refused with 503/10023 "insufficient resources". Each service reports
// its usage once a second (limits.go), so, as for one service's limits,
// a burst may overshoot by a second's worth of appends.
//
// A Pool is safe for concurrent use. Give one to every service of a
// server through Options.Pool; a service joins it at Start and leaves it
// at Shutdown.
type Pool struct {
	maxMemory, maxStorage int64 // 0: no bound of that kind

	// reserving is held while a stream create or update checks its
	// reservation against every service's and takes effect, so that two
	// accounts' creates cannot each fit alone and together not. It is
	// taken after the service's own limitsMu, never before.
	reserving sync.Mutex

	mu       sync.Mutex // guards services
	services map[*Service]struct{}

	memoryFull, storageFull atomic.Bool
}

// NewPool is a pool bounding the memory and the file streams of its
// services to maxMemory and maxStorage bytes; 0 leaves a kind unbounded.
func NewPool(maxMemory, maxStorage int64) *Pool {
	return &Pool{maxMemory: max(maxMemory, 0), maxStorage: max(maxStorage, 0), services: map[*Service]struct{}{}}
}

// limited reports whether the pool bounds anything.
func (p *Pool) limited() bool { return p != nil && (p.maxMemory > 0 || p.maxStorage > 0) }

func (p *Pool) join(svc *Service) {
	p.mu.Lock()
	p.services[svc] = struct{}{}
	p.mu.Unlock()
}

func (p *Pool) leave(svc *Service) {
	p.mu.Lock()
	delete(p.services, svc)
	p.mu.Unlock()
	p.refresh()
}

// members are the services in the pool now.
func (p *Pool) members() []*Service {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*Service, 0, len(p.services))
	for svc := range p.services {
		out = append(out, svc)
	}
	return out
}

// refresh sets the full flags from the usage each service last
// reported: a few atomic loads per service.
func (p *Pool) refresh() {
	var memory, file uint64
	for _, svc := range p.members() {
		memory += svc.usedMemory.Load()
		file += svc.usedStorage.Load()
	}
	p.memoryFull.Store(p.maxMemory > 0 && memory >= uint64(p.maxMemory))
	p.storageFull.Store(p.maxStorage > 0 && file >= uint64(p.maxStorage))
}

// full reports whether the bound of a storage kind is used up.
func (p *Pool) full(memory bool) bool {
	if p == nil {
		return false
	}
	if memory {
		return p.memoryFull.Load()
	}
	return p.storageFull.Load()
}

// limit is the pool's bound of cfg's storage kind; 0 for none.
func (p *Pool) limit(cfg streamConfig) int64 {
	if p == nil {
		return 0
	}
	if cfg.Storage == jetlog.StorageMemory {
		return p.maxMemory
	}
	return p.maxStorage
}

// reserved sums the max_bytes that the streams of every service in the
// pool reserve of storage kind, replacing (a stream being updated) left
// out.
func (p *Pool) reserved(storage jetlog.Storage, replacing *stream) int64 {
	var total int64
	for _, svc := range p.members() {
		total += svc.reservedBytes(storage, replacing)
	}
	return total
}

func errServerResources() *apiError {
	return newAPIError(503, 10023, "insufficient resources")
}
