package jetstream

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/jetlog/vfs"
	"github.com/bus-dev/bus/subjects"
)

// apiPrefix is where JetStream API requests arrive.
const apiPrefix = "$JS.API."

// Options configures a Service.
type Options struct {
	// Dir holds one directory per stream.
	Dir string
	// ServerName is reported as the cluster leader in infos.
	ServerName string
	// Version is the server version answers name (_nats.ver,
	// versioning.go).
	Version string
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ReferenceStoredReads turns off bus's checks of stored messages
	// against the reader's subscribe permissions (creating a consumer,
	// message and direct gets), as the reference does not check them
	// (docs/security.md).
	ReferenceStoredReads bool
	// FS is the file system every stream's files go through; nil means
	// the operating system's. It is there for fault injection (tests give
	// one that fails a stream's writes with ENOSPC or EROFS); the store
	// directory, its listing and its LOCK always use the operating
	// system's.
	FS jetlog.FS
	// Domain, when set, also serves the API on $JS.<domain>.API.> and
	// names the domain in publish acks and account info (domain.go).
	Domain string
	// MaxMemory and MaxStorage bound the bytes the memory and the file
	// streams hold together; 0 means no bound (storagelimits.go).
	MaxMemory, MaxStorage int64
	// DefaultSyncInterval, when not 0, makes streams created without
	// x_bus_durability use "interval" durability with this interval.
	DefaultSyncInterval time.Duration
	// MaxIndexMemory bounds the per-message indexes of sealed segments
	// held in memory across every stream; 0 means
	// jetlog.DefaultIndexCacheBytes.
	MaxIndexMemory int64
	// Caches, if set, are the file and index caches the service shares
	// with others (every account's JetStream of a server), so their
	// bounds hold for all of them together; MaxIndexMemory is then
	// theirs, and the store lock is the caches' (the service takes no
	// LOCK of its own and closes neither). nil: the service makes its
	// own at Start and closes them at Shutdown.
	Caches *Caches
	// Batch bounds atomic batch publishing (batch.go).
	Batch BatchLimits
	// Limits bound what clients set on streams and consumers (configlimits.go).
	Limits Limits
	// Encryption, when its Key is set, encrypts new file streams and
	// opens encrypted ones (encryption.go).
	Encryption Encryption
	// AccountName names the account the service serves, as the v2 ack
	// subjects carry it; "" is the global account, $G.
	AccountName string
	// Account are the limits of the account the service serves, when it
	// serves an account of the accounts block (configlimits.go); the zero
	// value has none. MaxMemory and MaxStorage are the account's storage
	// limits then.
	Account AccountLimits
	// Pool, when set, is the server-wide storage bound this service
	// shares with the services of the other accounts (pool.go); the
	// service's MaxMemory and MaxStorage still bound its own streams.
	Pool *Pool
	// MaxPending is the outbound bytes a connection may have queued (the
	// server's max_pending); a batch direct get that sets no max_bytes
	// sends at most this much, as the reference's. 0 means 64 MiB.
	MaxPending int64
	// AckFormatV2 gives deliveries and flow-control requests the v2 ack
	// subjects, $JS.ACK.<domain>.<account hash>.… (the reference's
	// feature flag js_ack_fc_v2); acks in both forms are always taken
	// (ackformat.go).
	AckFormatV2 bool
}

// shared is what every stream and consumer of a service uses: the core,
// the log, the clock. It is not a way back to the service.
type shared struct {
	core         Core
	log          *slog.Logger
	now          func() time.Time
	random       func() float64
	server       string
	version      string             // Options.Version
	files        *jetlog.FileCache  // shared by every stream's log
	index        *jetlog.IndexCache // likewise: the bound of their in-memory indexes
	keys         *jetlog.Keyring    // encryption at rest; nil: plaintext (Options.Encryption)
	fs           jetlog.FS          // the streams' file system, see Options.FS
	deadLettered atomic.Int64       // messages given up on, all consumers
	// deadLettersLost counts dead letters nothing stored.
	deadLettersLost atomic.Int64
	// lookup finds a stream by name (a mirror's or source's origin).
	lookup func(name string) *stream
	// domain is Options.Domain, for publish acks.
	domain string
	// account is Options.AccountName, for v2 ack subjects.
	account string
	// ackV2 is Options.AckFormatV2 (ackformat.go).
	ackV2 bool
	// memoryFull and storageFull say the server's storage limits are used
	// up (storagelimits.go).
	memoryFull, storageFull atomic.Bool
	// pool is Options.Pool: the bound shared with other accounts'
	// services; nil for none (pool.go).
	pool *Pool
	// batchLimits is Options.Batch with defaults; inflightBatches counts
	// the open atomic batches of every stream and stagedBytes their
	// messages' bytes, for their totals (batch.go).
	batchLimits     BatchLimits
	inflightBatches atomic.Int64
	// fastLimits bound the open fast batches (MaxInflightPerStream and
	// MaxInflightTotal; batchfastflow.go), inflightFast counts them.
	fastLimits   BatchLimits
	inflightFast atomic.Int64
	stagedBytes  atomic.Int64
	// bounds are the limits in force (limitsupdate.go): an account's
	// may change while the service runs.
	bounds atomic.Pointer[bounds]
	// baseLimits is Options.Limits, which the account's fold into.
	baseLimits Limits
	// referenceReads is Options.ReferenceStoredReads: authorize checks
	// no reads.
	referenceReads bool
	// rightsGen counts the changes of users' rights (RightsChanged), so
	// that a sourcer checks its owner's rights again.
	rightsGen atomic.Uint64
}

// Service is the persistence layer: the streams, their consumers and the
// API that manages them. API requests are handled on its own goroutines
// (the lanes: see Service.changes), so a slow disk never stalls a client's
// reader, and a slow change to one stream never stalls the others. Create it with
// New, start it with Start, stop it with Shutdown.
type Service struct {
	sh  *shared
	dir string
	// ownersMu serialises the checks of owners' rights (rightscheck.go).
	ownersMu sync.Mutex
	// files is shared by every stream's log: segment and journal files
	// open on demand, at most maxOpenFiles() at once and closed once
	// idle (jetlog.DefaultCloseIdleAfter), so descriptors follow
	// the working set, not the number of streams; its lock on the store's
	// LOCK file keeps a second process out.
	// It is nil when the service was given caches (Options.Caches),
	// which are then in caches and not the service's to close.
	files  *jetlog.FileCache
	caches *Caches

	mu      sync.Mutex // guards the fields below
	streams map[string]*stream
	// owners maps every stream subject to its stream's name, so that a
	// new stream's subjects are checked against all others by a trie walk
	// rather than pairwise. A stream being created holds its subjects
	// here before it exists in streams.
	owners   *subjects.Trie[string]
	creating map[string]bool
	// damaged holds the streams found on disk that could not be opened;
	// their names stay taken until an operator deals with their files.
	damaged map[string]DamagedStream

	apiSub Subscription
	dlqSub Subscription // the dead-letter streams' pub acks
	// redriveSub takes dead-letter redrive requests (redrive.go).
	redriveSub Subscription
	// verifySub takes store verify requests (storeverify.go).
	verifySub Subscription
	// domainSub takes the API on $JS.<domain>.API.> (domain.go).
	domainSub Subscription
	// batchConfigured is Options.Batch as given, for /jsz.
	batchConfigured BatchLimits
	// usedMemory and usedStorage are the bytes of the memory and file
	// streams, as the last limit check summed them, for the pool.
	usedMemory, usedStorage atomic.Uint64
	defaultSync             time.Duration // Options.DefaultSyncInterval
	directMaxBytes          int           // Options.MaxPending, or its default
	redrives                redrives
	verifies                storeVerifies
	// API requests wait in lanes: reads (infos, names, lists, message
	// gets) are served by a few goroutines at once, so that a slow change
	// never stalls them; changes wait in the lane of the stream they name
	// (changeLane), each served one at a time in order, so that a slow
	// change to one stream (a create with many subjects, a purge of a
	// large one) stalls only the streams sharing its lane.
	reads   chan apiRequest
	changes [apiChangeLanes]chan apiRequest
	// limitsMu makes a create's or an update's storage reservation and
	// its taking effect one step, now that they may run side by side.
	limitsMu sync.Mutex
	queued   atomic.Int64 // bytes of requests waiting in both lanes
	// auditing holds the requests being handled while someone listens
	// for audit advisories, by reply subject (audit.go).
	auditing sync.Map
	stop     chan struct{}
	lagKick  chan struct{} // capacity 1: a consumer with a lag alert was created
	workers  sync.WaitGroup

	apiTotal, apiErrors atomic.Int64
}

// apiRequest is a copied API request waiting in a lane.
type apiRequest struct {
	from    Rights // who sent it; nil means the server itself
	subject string
	reply   string
	hdr     []byte
	body    []byte
	size    int64 // what it counts against maxQueuedBytes
	// run, when set, is the server's own change to carry out in the lane
	// (reopen.go) instead of a request.
	run func()
}

// New returns a service over core that is not yet started.
func New(core Core, opts Options) (*Service, error) {
	if opts.Dir == "" {
		return nil, errors.New("jetstream: no store directory")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	svc := &Service{
		sh: &shared{
			core:    core,
			log:     opts.Logger,
			now:     opts.Now,
			random:  rand.Float64,
			server:  opts.ServerName,
			version: opts.Version,
			fs:      opts.FS,

			batchLimits:    opts.Batch.withDefaults(),
			fastLimits:     opts.Batch.fastDefaults(),
			referenceReads: opts.ReferenceStoredReads,
			ackV2:          opts.AckFormatV2,
		},
		batchConfigured: opts.Batch,
		dir:             opts.Dir,
		streams:         map[string]*stream{},
		owners:          subjects.NewTrie[string](),
		creating:        map[string]bool{},
		damaged:         map[string]DamagedStream{},
		reads:           make(chan apiRequest, apiLaneLen),
		stop:            make(chan struct{}),
		lagKick:         make(chan struct{}, 1),
	}
	for i := range svc.changes {
		svc.changes[i] = make(chan apiRequest, apiLaneLen)
	}
	svc.sh.lookup = svc.stream
	keys, err := opts.Encryption.keyring()
	if err != nil {
		return nil, err
	}
	svc.sh.keys = keys
	svc.sh.domain = opts.Domain
	svc.sh.account = opts.AccountName
	svc.sh.pool = opts.Pool
	svc.sh.baseLimits = opts.Limits
	svc.sh.setBounds(opts.MaxMemory, opts.MaxStorage, opts.Account)
	svc.defaultSync = opts.DefaultSyncInterval
	if svc.caches = opts.Caches; svc.caches != nil {
		svc.sh.index = svc.caches.Index
	} else {
		svc.sh.index = jetlog.NewIndexCache(jetlog.IndexCacheOptions{MaxBytes: opts.MaxIndexMemory})
	}
	svc.directMaxBytes = int(cmp.Or(opts.MaxPending, defaultMaxPending))
	if opts.Domain != "" && !ValidDomain(opts.Domain) {
		return nil, fmt.Errorf("jetstream: invalid domain name %q: may not contain ., * or >", opts.Domain)
	}
	return svc, nil
}

// Start opens every stream under the store directory and starts serving
// the API.
func (svc *Service) Start() error {
	// Durable before any stream in it is: a new store directory's entry
	// in its parent is fsynced, up to the first directory that existed.
	if err := vfs.MkdirAllDurable(vfs.OSFS{}, svc.dir, 0o755); err != nil {
		return fmt.Errorf("jetstream: store %s: %w", svc.dir, err)
	}
	if svc.caches != nil {
		svc.sh.files = svc.caches.Files
	} else {
		files, err := jetlog.NewFileCache(jetlog.FileCacheOptions{MaxOpen: maxOpenFiles(), LockFile: filepath.Join(svc.dir, "LOCK")})
		if err != nil {
			return fmt.Errorf("jetstream: store %s: %w", svc.dir, err)
		}
		svc.files, svc.sh.files = files, files
	}
	svc.clearRestores()
	if err := svc.loadStreams(); err != nil {
		svc.closeStreams()
		return err
	}
	svc.RightsChanged() // the owners' rights may differ from when they stored their assets
	sub, err := svc.sh.core.SubscribeRequests(apiPrefix+">", svc.captureRequest)
	if err != nil {
		svc.closeStreams()
		return err
	}
	svc.apiSub = sub
	if svc.dlqSub, err = svc.sh.core.Subscribe(deadLetterAckPrefix+">", svc.deadLetterAck); err != nil {
		svc.sh.core.Unsubscribe(sub)
		svc.closeStreams()
		return err
	}
	if svc.redriveSub, err = svc.sh.core.SubscribeRequests(redrivePrefix+"*", svc.captureRedrive); err != nil {
		svc.sh.core.Unsubscribe(svc.dlqSub)
		svc.sh.core.Unsubscribe(sub)
		svc.closeStreams()
		return err
	}
	if svc.verifySub, err = svc.sh.core.SubscribeRequests(storeVerifyPrefix+"*", svc.captureStoreVerify); err != nil {
		svc.sh.core.Unsubscribe(svc.redriveSub)
		svc.sh.core.Unsubscribe(svc.dlqSub)
		svc.sh.core.Unsubscribe(sub)
		svc.closeStreams()
		return err
	}
	if svc.sh.domain != "" {
		if svc.domainSub, err = svc.sh.core.SubscribeRequests(svc.domainPrefix()+">", svc.captureDomainRequest); err != nil {
			svc.sh.core.Unsubscribe(svc.verifySub)
			svc.sh.core.Unsubscribe(svc.redriveSub)
			svc.sh.core.Unsubscribe(svc.dlqSub)
			svc.sh.core.Unsubscribe(sub)
			svc.closeStreams()
			return err
		}
	}
	if svc.sh.pool != nil {
		svc.sh.pool.join(svc)
	}
	// An account's service watches even without limits: an update may
	// set them (limitsupdate.go).
	if b := svc.sh.bound(); b.maxMemory > 0 || b.maxStorage > 0 || svc.sh.pool.limited() || svc.sh.account != "" {
		svc.workers.Add(1)
		go svc.limitWatch()
	}
	svc.workers.Add(2 + apiChangeLanes + apiReaders)
	go svc.lagWatch()
	go svc.fenceWatch()
	for _, lane := range svc.changes {
		go svc.serve(lane)
	}
	for range apiReaders {
		go svc.serve(svc.reads)
	}
	svc.sh.log.Info("jetstream enabled", "store_dir", svc.dir, "streams", len(svc.streams), "encryption", svc.sh.keys.Describe())
	return nil
}

// Dir is where the streams live.
func (svc *Service) Dir() string { return svc.dir }

// loadStreams reopens the streams found in the store directory. A stream
// that cannot be opened is reported and left as it is on disk; every
// other stream is served.
func (svc *Service) loadStreams() error {
	entries, err := os.ReadDir(svc.dir)
	if err != nil {
		return fmt.Errorf("jetstream: read %s: %w", svc.dir, err)
	}
	total := 0
	for _, e := range entries {
		if e.IsDir() {
			total++
		}
	}
	// A long recovery is reported every few seconds (loadprogress.go).
	progress := newLoadProgress(svc.sh.log, svc.sh.now, total)
	stop, ticking := make(chan struct{}), make(chan struct{})
	go func() { defer close(ticking); progress.run(loadProgressEvery, stop) }()
	defer func() { close(stop); <-ticking; progress.finish() }()
	var keyless []string // streams refused for their encryption
	defer func() { svc.reportKeyMismatches(keyless) }()
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") { // .restore: restores in progress
			continue
		}
		dir := filepath.Join(svc.dir, e.Name())
		progress.opening(e.Name())
		st, err := svc.loadStream(dir)
		if errors.Is(err, errEmptyDir) {
			progress.streamDone(0)
			continue
		}
		if err != nil {
			progress.streamDone(0)
			if keyMismatch(err) {
				keyless = append(keyless, e.Name())
				svc.sh.log.Error("stream not loaded: its encryption does not match the configured key; its files are left as found", "stream", e.Name(), "dir", dir, "err", err)
			} else {
				svc.sh.log.Error("stream damaged; not loaded, its files are left as found", "stream", e.Name(), "dir", dir, "err", err)
			}
			svc.mu.Lock()
			svc.damaged[e.Name()] = damagedStream(e.Name(), err)
			svc.mu.Unlock()
			continue
		}
		svc.mu.Lock()
		svc.streams[st.name] = st
		svc.own(st.name, st.cfg.Subjects)
		svc.mu.Unlock()
		st.loadConsumers()
		progress.streamDone(st.log.State().Msgs)
	}
	return nil
}

// errEmptyDir is a stream directory with nothing in it (a create that
// failed before writing anything): nothing to load or report.
var errEmptyDir = errors.New("jetstream: empty stream directory")

// loadStream opens the stream stored in dir.
func (svc *Service) loadStream(dir string) (*stream, error) {
	lcfg, _, err := jetlog.LoadConfigWith(dir, svc.sh.logOptions())
	if errors.Is(err, fs.ErrNotExist) {
		if names, rerr := os.ReadDir(dir); rerr == nil && onlyKeyFiles(names) {
			return nil, errEmptyDir
		}
		return nil, fmt.Errorf("stream.meta is missing: %w", err)
	}
	if err != nil {
		return nil, err
	}
	var cfg streamConfig
	if err := json.Unmarshal(lcfg.Raw, &cfg); err != nil {
		return nil, fmt.Errorf("stream config: %w", err)
	}
	cfg.owner = takeOwner(cfg.extra)
	if cfg.Name != filepath.Base(dir) {
		return nil, fmt.Errorf("stream config names %q", cfg.Name)
	}
	return openStream(svc.sh, cfg, dir)
}

// DamagedStream is a stream found on disk that could not be opened.
type DamagedStream struct {
	Name  string `json:"name"`
	Error string `json:"error"`
	// unwritable says it failed for want of a writable directory (a
	// read-only store, a full disk), so it is opened again once its
	// directory is writable (reopen.go).
	unwritable bool
}

// Damaged lists the streams that could not be opened, by name.
func (svc *Service) Damaged() []DamagedStream {
	svc.mu.Lock()
	out := make([]DamagedStream, 0, len(svc.damaged))
	for _, d := range svc.damaged {
		out = append(out, d)
	}
	svc.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Fenced lists the streams that are served but stopped accepting writes
// (a failed fsync or truncate: a read-only or failing disk), with why;
// reads go on, and a restart reopens them.
func (svc *Service) Fenced() []DamagedStream {
	var out []DamagedStream
	for _, st := range svc.sortedStreams() {
		if err := st.log.Err(); err != nil {
			out = append(out, DamagedStream{Name: st.name, Error: publicError(err)})
		}
	}
	return out
}

// maxStoreFiles is the most segment and journal files the store keeps
// open at once (see maxOpenFiles).
const maxStoreFiles = 1024

// Shutdown stops the API and closes every stream; waiting pulls are told
// the server is shutting down.
func (svc *Service) Shutdown() {
	if svc.apiSub != nil {
		if svc.domainSub != nil {
			svc.sh.core.Unsubscribe(svc.domainSub)
		}
		svc.sh.core.Unsubscribe(svc.verifySub)
		svc.sh.core.Unsubscribe(svc.redriveSub)
		svc.sh.core.Unsubscribe(svc.dlqSub)
		svc.sh.core.Unsubscribe(svc.apiSub)
		close(svc.stop)
		svc.workers.Wait()
		if svc.sh.pool != nil {
			svc.sh.pool.leave(svc)
		}
	}
	svc.closeStreams()
}

func (svc *Service) stream(name string) *stream {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	return svc.streams[name]
}

// sortedStreams returns the streams ordered by name.
func (svc *Service) sortedStreams() []*stream {
	svc.mu.Lock()
	out := make([]*stream, 0, len(svc.streams))
	for _, st := range svc.streams {
		out = append(out, st)
	}
	svc.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// overlapsOthers reports whether subjects collide with another stream's
// (or one being created). Called with svc.mu held.
func (svc *Service) overlapsOthers(name string, list []string) bool {
	hit := false
	for _, s := range list {
		svc.owners.Overlapping(s, func(owner string) bool {
			hit = owner != name
			return !hit
		})
		if hit {
			return true
		}
	}
	return false
}

// own records subjects as name's; disown forgets them. Called with
// svc.mu held.
func (svc *Service) own(name string, list []string) {
	for _, s := range list {
		_ = svc.owners.Insert(s, "", name) // valid: checked by normalize
	}
}

func (svc *Service) disown(name string, list []string) {
	for _, s := range list {
		_ = svc.owners.Remove(s, "", name)
	}
}
