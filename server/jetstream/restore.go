package jetstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/nats-io/nuid"
)

// STREAM.RESTORE (docs/backup.md): the request carries the stream's
// config; the response names a deliver subject to which the client sends
// the snapshot in chunks, each a request answered with an empty message
// once stored, and then an empty request answered with the stream create
// response. The chunks are spooled to disk, the whole snapshot is checked
// (restorebuild.go), and only then is the stream built, aside, and put in
// place: a damaged or incomplete snapshot creates nothing.
const (
	typeStreamRestore = "io.nats.jetstream.api.v1.stream_restore_response"
	// restoreIdle is how long a restore waits for its next chunk before
	// it is abandoned.
	restoreIdle = 5 * time.Second
	// restoreDirName holds restores in progress, under the store
	// directory; a name starting with a dot is never a stream.
	restoreDirName = ".restore"
)

type restoreRequest struct {
	Config streamConfig `json:"config"`
	State  streamState  `json:"state"`
}

type restoreResponse struct {
	Type           string    `json:"type"`
	Error          *apiError `json:"error,omitempty"`
	DeliverSubject string    `json:"deliver_subject,omitempty"`
}

func errRestore(err error) *apiError { return newAPIError(500, 10062, "restore failed: %v", err) }

func (svc *Service) streamRestore(r apiRequest, name string) (any, *apiError) {
	if len(bytes.TrimSpace(r.body)) == 0 {
		return nil, newAPIError(400, 10003, "bad request")
	}
	var req restoreRequest
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	cfg := req.Config
	if cfg.Name == "" {
		cfg.Name = name
	}
	if cfg.Name != name {
		return nil, newAPIError(400, 10056, "stream name in subject does not match request")
	}
	if e := unknownField(cfg.extra, referenceStreamFields); e != nil {
		return nil, e
	}
	limits := svc.sh.bound().limits
	limits.streamDefaults(&cfg)
	if e := cfg.normalize(); e != nil {
		return nil, e
	}
	if e := limits.checkStream(&cfg); e != nil {
		return nil, e
	}
	// The restored stream, and its consumers, are the restorer's.
	if e := svc.mayOwn(r.from, &cfg); e != nil {
		return nil, e
	}
	if e := svc.reserveRestore(cfg); e != nil {
		return nil, e
	}
	rs, err := svc.newRestore(cfg)
	if err != nil {
		svc.unreserveRestore(cfg)
		return nil, errRestore(err)
	}
	return restoreResponse{Type: typeStreamRestore, DeliverSubject: rs.deliver}, nil
}

// reserveRestore holds the name and subjects for the restore, as a create
// does while it opens the log.
func (svc *Service) reserveRestore(cfg streamConfig) *apiError {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	_, damaged := svc.damaged[cfg.Name]
	if svc.streams[cfg.Name] != nil || damaged || svc.creating[cfg.Name] {
		return newAPIError(400, 10130, "stream name already in use, cannot restore")
	}
	if svc.overlapsOthers(cfg.Name, cfg.Subjects) {
		return errSubjectsOverlap()
	}
	svc.creating[cfg.Name] = true
	svc.own(cfg.Name, cfg.Subjects)
	return nil
}

func (svc *Service) unreserveRestore(cfg streamConfig) {
	svc.mu.Lock()
	delete(svc.creating, cfg.Name)
	if svc.streams[cfg.Name] == nil {
		svc.disown(cfg.Name, cfg.Subjects)
	}
	svc.mu.Unlock()
}

// restore is one restore receiving its chunks.
type restore struct {
	svc     *Service
	cfg     streamConfig
	deliver string
	stage   string // its directory under restoreDirName
	sub     Subscription

	mu    sync.Mutex
	spool io.WriteCloser
	file  spool // where the chunks are spooled (restorespool.go)
	size  int64
	idle  *time.Timer
	ended bool
}

func (svc *Service) newRestore(cfg streamConfig) (*restore, error) {
	id := nuid.Next()
	rs := &restore{svc: svc, cfg: cfg, deliver: "$JS.SNAPSHOT.RESTORE." + cfg.Name + "." + id,
		stage: filepath.Join(svc.dir, restoreDirName, cfg.Name+"."+id)}
	if err := baseFS(svc.sh.fs).MkdirAll(rs.stage, 0o755); err != nil {
		return nil, err
	}
	sp, err := newSpool(svc.sh.fs, filepath.Join(rs.stage, "snapshot"), svc.sh.keys != nil)
	if err != nil {
		svc.removeStage(rs.stage)
		return nil, err
	}
	f, err := sp.create()
	if err != nil {
		svc.removeStage(rs.stage)
		return nil, err
	}
	rs.file = sp
	rs.spool = f
	rs.mu.Lock()
	defer rs.mu.Unlock()
	sub, err := svc.sh.core.Subscribe(rs.deliver, rs.chunk)
	if err != nil {
		_ = f.Close()
		svc.removeStage(rs.stage)
		return nil, err
	}
	rs.sub = sub
	rs.idle = time.AfterFunc(restoreIdle, func() { rs.abandon("stalled: no chunk for " + restoreIdle.String()) })
	return rs, nil
}

// chunk takes one chunk, on the sender's reader goroutine: writing it
// before the answer holds a fast sender to the disk's pace.
func (rs *restore) chunk(_, reply []byte, hdr int, msg []byte) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.ended {
		return true
	}
	if len(reply) == 0 {
		rs.endLocked()
		rs.svc.sh.log.Warn("restore abandoned: a chunk without a reply subject", "stream", rs.cfg.Name)
		return true
	}
	if hdr > 0 {
		msg = msg[hdr:]
	}
	if len(msg) == 0 {
		// The end of the transfer: check and build off this goroutine.
		rs.ended = true
		rs.idle.Stop()
		rs.svc.sh.core.Unsubscribe(rs.sub)
		err := rs.spool.Close()
		go rs.finish(string(reply), err)
		return true
	}
	if _, err := rs.spool.Write(msg); err != nil {
		rs.endLocked()
		rs.svc.replyTo(string(reply), typeStreamCreate).send(nil, errRestore(err))
		return true
	}
	rs.size += int64(len(msg))
	rs.idle.Reset(restoreIdle)
	rs.svc.sh.core.Publish(string(reply), "", nil, nil)
	return true
}

// endLocked drops the restore: nothing was created. With rs.mu held.
func (rs *restore) endLocked() {
	if rs.ended {
		return
	}
	rs.ended = true
	rs.idle.Stop()
	rs.svc.sh.core.Unsubscribe(rs.sub)
	_ = rs.spool.Close()
	rs.svc.removeStage(rs.stage)
	rs.svc.unreserveRestore(rs.cfg)
}

func (rs *restore) abandon(why string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if !rs.ended {
		rs.svc.sh.log.Warn("restore abandoned", "stream", rs.cfg.Name, "why", why)
	}
	rs.endLocked()
}

// finish checks the spooled snapshot, builds the stream and answers.
func (rs *restore) finish(reply string, spoolErr error) {
	svc := rs.svc
	st, err := rs.build(spoolErr)
	// Gone before the answer, so that a client told the restore ended
	// finds nothing of it left.
	svc.removeStage(rs.stage)
	if err != nil {
		svc.unreserveRestore(rs.cfg)
		svc.sh.log.Warn("restore refused", "stream", rs.cfg.Name, "bytes", rs.size, "err", err)
		svc.replyTo(reply, typeStreamCreate).send(nil, errRestore(err))
		return
	}
	svc.sh.log.Info("restore completed", "stream", rs.cfg.Name, "bytes", rs.size)
	svc.replyTo(reply, typeStreamCreate).send(st.info(typeStreamCreate), nil)
	svc.sh.adviseStream(rs.cfg.Name, actionCreate)
}

func (rs *restore) build(spoolErr error) (*stream, error) {
	if spoolErr != nil {
		return nil, spoolErr
	}
	if err := verifySnapshot(rs.file); err != nil {
		return nil, err
	}
	if rs.cfg.Storage == jetlog.StorageMemory {
		return rs.svc.installRestoredMemory(rs.cfg, rs.file)
	}
	built := filepath.Join(rs.stage, rs.cfg.Name)
	if err := buildStream(rs.svc.sh, rs.cfg, rs.file, built); err != nil {
		return nil, err
	}
	return rs.svc.installRestored(rs.cfg, built)
}

// installRestored moves the built stream into the store and opens it as
// at a start, with its consumers.
func (svc *Service) installRestored(cfg streamConfig, built string) (*stream, error) {
	if err := svc.refuseWhileStopping(); err != nil {
		return nil, err
	}
	dir := filepath.Join(svc.dir, cfg.Name)
	fsys := baseFS(svc.sh.fs)
	if err := fsys.Rename(built, dir); err != nil {
		return nil, err
	}
	// The new entry first: once it is durable the stream is there; then
	// the staging directory's, so that no cut finds it in both places.
	if err := fsys.SyncDir(svc.dir); err != nil {
		_ = jetlog.RemoveStream(svc.sh.fs, dir)
		return nil, err
	}
	if err := fsys.SyncDir(filepath.Dir(built)); err != nil {
		_ = jetlog.RemoveStream(svc.sh.fs, dir)
		return nil, err
	}
	st, err := svc.loadStream(dir)
	if err != nil {
		_ = jetlog.RemoveStream(svc.sh.fs, dir)
		return nil, fmt.Errorf("restored stream does not open: %w", err)
	}
	svc.adoptRestored(cfg, st)
	return st, nil
}

// installRestoredMemory opens the memory stream filled from the checked
// snapshot, before it captures anything, and starts its consumers from
// their state at the cut (a memory stream's consumers are not journaled).
func (svc *Service) installRestoredMemory(cfg streamConfig, sp spool) (*stream, error) {
	if err := svc.refuseWhileStopping(); err != nil {
		return nil, err
	}
	var consumers []restoredConsumer
	st, err := openStreamFilled(svc.sh, cfg, filepath.Join(svc.dir, cfg.Name), func(l *jetlog.Log) error {
		var err error
		consumers, err = fillFromSnapshot(l, sp)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, c := range consumers {
		c.cfg.owner = cfg.owner
		delete(c.cfg.extra, ownerField)
		if _, e := st.createConsumerAt(c.cfg, "", &c.Consumer); e != nil {
			_ = st.close("503 Stream Restore Failed")
			return nil, fmt.Errorf("consumer %q: %s", c.Name, e.Description)
		}
	}
	svc.adoptRestored(cfg, st)
	return st, nil
}

// refuseWhileStopping: shutdown closed the streams, so one opened now
// would stay open.
func (svc *Service) refuseWhileStopping() error {
	select {
	case <-svc.stop:
		return errors.New("the server is shutting down")
	default:
		return nil
	}
}

// adoptRestored serves the restored stream under its reserved name and
// starts its consumers.
func (svc *Service) adoptRestored(cfg streamConfig, st *stream) {
	svc.mu.Lock()
	delete(svc.creating, cfg.Name)
	svc.streams[cfg.Name] = st
	svc.mu.Unlock()
	st.loadConsumers()
}

// clearRestores removes what restores cut short by a stop left behind:
// no restore outlives the process that received its chunks.
func (svc *Service) clearRestores() {
	dir := filepath.Join(svc.dir, restoreDirName)
	if err := jetlog.RemoveStream(svc.sh.fs, dir); err != nil {
		svc.sh.log.Warn("unfinished restores not removed", "dir", dir, "err", err)
	}
}

// removeStage removes a restore's staging directory, on the store's file
// system. A failure is left to clearRestores at the next start.
func (svc *Service) removeStage(stage string) {
	if err := jetlog.RemoveStream(svc.sh.fs, stage); err != nil {
		svc.sh.log.Warn("restore staging not removed", "dir", stage, "err", err)
	}
}
