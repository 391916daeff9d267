package jetstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// Page sizes of the reference's LIST and NAMES responses.
const (
	listLimit  = 256
	namesLimit = 1024
	// subjectsLimit is the page size of per-subject counts in STREAM.INFO.
	subjectsLimit = 100000
)

// handle dispatches one API request by subject, and sends what its
// handler returns (apireply.go), which counts it. Unknown subjects get no
// answer at all and are not counted, as with the reference.
func (svc *Service) handle(r apiRequest) {
	t := strings.Split(strings.TrimPrefix(r.subject, apiPrefix), ".")
	if t[0] != "DIRECT" && levelTooHigh(r.hdr) { // a direct get answers with a status of its own
		if typ := responseType(t); typ != "" {
			svc.replyTo(r.reply, typ).send(nil, errRequiredAPILevel())
		}
		return
	}
	switch {
	case len(t) == 1 && t[0] == "INFO":
		svc.replyTo(r.reply, typeAccountInfo).send(svc.accountInfo(), nil)
	case len(t) == 2 && t[0] == "STREAM" && t[1] == "LIST":
		svc.replyTo(r.reply, typeStreamList).send(svc.streamList(r))
	case len(t) == 2 && t[0] == "STREAM" && t[1] == "NAMES":
		svc.replyTo(r.reply, typeStreamNames).send(svc.streamNames(r))
	case len(t) == 3 && t[0] == "STREAM":
		svc.handleStream(r, t[1], t[2])
	case len(t) == 4 && t[0] == "STREAM" && t[1] == "MSG" && t[2] == "GET":
		svc.replyTo(r.reply, typeMsgGet).send(svc.msgGet(r, t[3]))
	case len(t) == 4 && t[0] == "STREAM" && t[1] == "MSG" && t[2] == "DELETE":
		svc.replyTo(r.reply, typeMsgDelete).send(svc.msgDelete(r, t[3]))
	case len(t) >= 3 && t[0] == "DIRECT" && t[1] == "GET":
		svc.directGet(r, t[2], strings.Join(t[3:], "."), len(t) > 3)
	case t[0] == "CONSUMER":
		svc.handleConsumer(r, t[1:])
	}
}

func (svc *Service) handleStream(r apiRequest, op, name string) {
	switch op {
	case "CREATE":
		svc.replyTo(r.reply, typeStreamCreate).send(svc.streamCreate(r, name))
	case "UPDATE":
		svc.replyTo(r.reply, typeStreamUpdate).send(svc.streamUpdate(r, name))
	case "INFO":
		svc.replyTo(r.reply, typeStreamInfo).send(svc.streamInfo(r, name))
	case "DELETE":
		svc.replyTo(r.reply, typeStreamDelete).send(svc.streamDelete(name))
	case "PURGE":
		svc.replyTo(r.reply, typeStreamPurge).send(svc.streamPurge(r, name))
	case "SNAPSHOT":
		svc.replyTo(r.reply, typeStreamSnapshot).send(svc.streamSnapshot(r, name))
	case "RESTORE":
		svc.replyTo(r.reply, typeStreamRestore).send(svc.streamRestore(r, name))
	}
}

// decodeBody unmarshals a request body; an empty body leaves v as is.
func decodeBody(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalidJSON(err)
	}
	return nil
}

type accountInfo struct {
	Type    string `json:"type"`
	Memory  uint64 `json:"memory"`
	Storage uint64 `json:"storage"`
	// ReservedMemory and ReservedStorage sum the max_bytes of the
	// streams that set one.
	ReservedMemory  uint64        `json:"reserved_memory"`
	ReservedStorage uint64        `json:"reserved_storage"`
	Streams         int           `json:"streams"`
	Consumers       int           `json:"consumers"`
	Limits          accountLimits `json:"limits"`
	Domain          string        `json:"domain,omitempty"`
	API             apiStats      `json:"api"`
}

type accountLimits struct {
	MaxMemory    int64 `json:"max_memory"`
	MaxStorage   int64 `json:"max_storage"`
	MaxStreams   int   `json:"max_streams"`
	MaxConsumers int   `json:"max_consumers"`
	MaxAckPend   int   `json:"max_ack_pending"`
	// The account's bounds on one stream's max_bytes, and whether a
	// stream must set one (AccountLimits); -1 and false without them,
	// as the reference's.
	MemoryMaxStreamBytes int64 `json:"memory_max_stream_bytes"`
	StoreMaxStreamBytes  int64 `json:"storage_max_stream_bytes"`
	MaxBytesRequired     bool  `json:"max_bytes_required"`
}

type apiStats struct {
	Level  int   `json:"level"`
	Total  int64 `json:"total"`
	Errors int64 `json:"errors"`
}

// APILevel is the JetStream API level bus serves, which clients read to
// decide what they may ask for, and the one constant that says it: 5 is
// nats-server 2.15's. Level 1 brought per-message TTLs, subject delete
// markers (nats.go's LimitMarkerTTL and KeyTTL), consumer pause and
// priority groups (machinepriority.go); level 2 counters (counter.go),
// atomic batch publish (batch.go), message schedules (schedule.go) and
// persist_mode "async"; level 4 fast batch publish (batchfast.go) and
// the flow_control ack policy; level 5 stream identity. Batch and
// multi_last direct gets (apidirectbatch.go) are served at every level.
const APILevel = 5

func (svc *Service) accountInfo() accountInfo {
	info := accountInfo{Type: typeAccountInfo, Limits: accountLimits{-1, -1, -1, -1, -1, -1, -1, false}, Domain: svc.sh.domain}
	b := svc.sh.bound()
	if b.maxMemory > 0 {
		info.Limits.MaxMemory = b.maxMemory
	}
	if b.maxStorage > 0 {
		info.Limits.MaxStorage = b.maxStorage
	}
	b.account.report(&info.Limits)
	for _, st := range svc.sortedStreams() {
		s, cfg := st.log.State(), st.config()
		reserved := uint64(max(cfg.MaxBytes, 0))
		if cfg.Storage == jetlog.StorageMemory {
			info.Memory += s.Bytes
			info.ReservedMemory += reserved
		} else {
			info.Storage += s.Bytes
			info.ReservedStorage += reserved
		}
		info.Streams++
		info.Consumers += st.numConsumers()
	}
	info.API = apiStats{Level: APILevel, Total: svc.apiTotal.Load(), Errors: svc.apiErrors.Load()}
	return info
}

func (svc *Service) streamCreate(r apiRequest, name string) (any, *apiError) {
	var cfg streamConfig
	if len(bytes.TrimSpace(r.body)) == 0 {
		return nil, errStreamNameMismatch()
	}
	if e := decodeBody(r.body, &cfg); e != nil {
		return nil, e
	}
	if e := unknownField(cfg.extra, referenceStreamFields); e != nil {
		return nil, e
	}
	if cfg.Name != name {
		return nil, errStreamNameMismatch()
	}
	if cfg.Durability == "" && svc.defaultSync > 0 {
		cfg.Durability, cfg.SyncInterval = jetlog.DurabilityInterval, int64(svc.defaultSync)
	}
	limits := svc.sh.bound().limits
	limits.streamDefaults(&cfg)
	if e := cfg.normalize(); e != nil {
		return nil, e
	}
	if e := limits.checkStream(&cfg); e != nil {
		return nil, e
	}
	if e := svc.checkDeliverPrefixes(&cfg); e != nil {
		return nil, e
	}
	if e := svc.checkSourceCycles(&cfg); e != nil {
		return nil, e
	}
	if cfg.Sealed {
		return nil, errStreamConfig("stream configuration for create can not be sealed")
	}
	cfg.Metadata = withRequiredLevel(cfg.Metadata, cfg.requiredLevel())
	if e := svc.mayOwn(r.from, &cfg); e != nil {
		return nil, e
	}
	defer svc.lockLimits(cfg)()
	if e := svc.reserve(cfg, svc.stream(name)); e != nil {
		return nil, e
	}
	svc.mu.Lock()
	if d, ok := svc.damaged[name]; ok {
		// Its files are there: creating over them could mix old and new.
		// Deleting the stream removes them.
		svc.mu.Unlock()
		return nil, errStreamOffline(d.Error)
	}
	if st, ok := svc.streams[name]; ok {
		svc.mu.Unlock()
		stored, asked := st.config(), cfg
		asked.Metadata = levelOf(cfg.Metadata, stored.Metadata) // one stored before levels were is the same
		if !sameJSON(stored, asked) {
			return nil, errStreamNameInUse()
		}
		info := st.info(typeStreamCreate)
		info.DidCreate = true
		return info, nil
	}
	if svc.creating[name] || svc.overlapsOthers(name, cfg.Subjects) {
		svc.mu.Unlock()
		return nil, errSubjectsOverlap()
	}
	// Reserve the name and subjects, then open the log without the lock:
	// it is disk I/O, and other streams keep being served meanwhile.
	svc.creating[name] = true
	svc.own(name, cfg.Subjects)
	svc.mu.Unlock()
	st, err := openStream(svc.sh, cfg, filepath.Join(svc.dir, name))
	svc.mu.Lock()
	delete(svc.creating, name)
	if err != nil {
		svc.disown(name, cfg.Subjects)
	} else {
		svc.streams[name] = st
	}
	svc.mu.Unlock()
	if err != nil {
		return nil, svc.storageFailed(typeStreamCreate, name, err)
	}
	info := st.info(typeStreamCreate)
	info.DidCreate = true
	return followedBy{info, func() { svc.sh.adviseStream(name, actionCreate) }}, nil
}

func (svc *Service) streamUpdate(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		return nil, e
	}
	var cfg streamConfig
	if e := decodeBody(r.body, &cfg); e != nil {
		return nil, e
	}
	if e := unknownField(cfg.extra, referenceStreamFields); e != nil {
		return nil, e
	}
	if cfg.Name != name {
		return nil, errStreamNameMismatch()
	}
	limits := svc.sh.bound().limits
	limits.streamDefaults(&cfg)
	if e := cfg.normalize(); e != nil {
		return nil, e
	}
	if e := limits.checkStream(&cfg); e != nil {
		return nil, e
	}
	if e := svc.checkDeliverPrefixes(&cfg); e != nil {
		return nil, e
	}
	if e := svc.checkSourceCycles(&cfg); e != nil {
		return nil, e
	}
	old := st.config()
	if e := checkUpdate(old, &cfg); e != nil {
		return nil, e
	}
	cfg.Metadata = withRequiredLevel(cfg.Metadata, cfg.requiredLevel())
	if e := svc.mayOwn(r.from, &cfg); e != nil {
		return nil, e
	}
	defer svc.lockLimits(cfg)()
	if e := svc.reserve(cfg, st); e != nil {
		return nil, e
	}
	svc.mu.Lock()
	overlap := svc.overlapsOthers(name, cfg.Subjects)
	if !overlap {
		svc.disown(name, old.Subjects)
		svc.own(name, cfg.Subjects)
	}
	svc.mu.Unlock()
	if overlap {
		return nil, errSubjectsOverlap()
	}
	if err := st.log.UpdateConfig(cfg.logConfig()); err != nil {
		svc.mu.Lock()
		svc.disown(name, cfg.Subjects)
		svc.own(name, old.Subjects)
		svc.mu.Unlock()
		return nil, svc.storageFailed(typeStreamUpdate, name, err)
	}
	st.setConfig(cfg)
	st.updateSourcing(old, cfg)
	if err := st.subscribe(); err != nil {
		return nil, svc.storageFailed(typeStreamUpdate, name, err)
	}
	// The new owner's rights, and every owner's over what streams may
	// now hold (a mirror's consumers read what its origin captures).
	svc.checkOwners()
	return followedBy{st.info(typeStreamUpdate), func() { svc.sh.adviseStream(name, actionModify) }}, nil
}

// streamInfoResponse adds the paging fields the reference sends on INFO.
type streamInfoResponse struct {
	streamInfo
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

func (svc *Service) streamInfo(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		// The reference's error here carries the paging fields too.
		return struct {
			apiResponse
			Total  int `json:"total"`
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
		}{apiResponse: apiResponse{Type: typeStreamInfo, Error: e}}, e
	}
	var req struct {
		SubjectsFilter string `json:"subjects_filter"`
		DeletedDetails bool   `json:"deleted_details"`
		Offset         int    `json:"offset"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	resp := streamInfoResponse{streamInfo: st.info(typeStreamInfo)}
	if req.DeletedDetails {
		resp.State.Deleted = st.log.Deleted(maxDeletedDetails)
	}
	if req.SubjectsFilter != "" {
		// Per-subject counts, as "nats stream subjects" asks for them.
		page, total := svc.subjectCountsPage(r.from, st, req.SubjectsFilter, max(req.Offset, 0))
		if total > 0 {
			// As the reference: the paging fields only when some match.
			resp.Offset, resp.Limit, resp.Total = max(req.Offset, 0), subjectsLimit, total
			resp.State.Subjects = page
		}
	}
	return resp, nil
}

// maxDeletedDetails bounds one answer's deleted seqs (bus's own: the
// reference lists them all).
const maxDeletedDetails = 1 << 20

type successResponse struct {
	Type    string `json:"type"`
	Success bool   `json:"success"`
}

func (svc *Service) streamDelete(name string) (any, *apiError) {
	svc.mu.Lock()
	st := svc.streams[name]
	if st != nil {
		delete(svc.streams, name)
		svc.disown(name, st.config().Subjects)
	}
	_, damaged := svc.damaged[name]
	svc.mu.Unlock()
	if st == nil && damaged {
		// The operator's way out for a stream that cannot be opened:
		// delete it, files and all.
		if err := jetlog.RemoveStream(svc.sh.fs, filepath.Join(svc.dir, name)); err != nil {
			return nil, svc.storageFailed(typeStreamDelete, name, err)
		}
		svc.mu.Lock()
		delete(svc.damaged, name)
		svc.mu.Unlock()
		svc.sh.log.Warn("damaged stream deleted", "stream", name)
		return successResponse{Type: typeStreamDelete, Success: true}, nil
	}
	if st == nil {
		return nil, errStreamNotFound()
	}
	if err := st.destroy(); err != nil {
		return nil, svc.storageFailed(typeStreamDelete, name, err)
	}
	deleted := successResponse{Type: typeStreamDelete, Success: true}
	return followedBy{deleted, func() { svc.sh.adviseStream(name, actionDelete) }}, nil
}

func (svc *Service) streamPurge(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		return nil, e
	}
	var req struct {
		Filter string `json:"filter"`
		Seq    uint64 `json:"seq"`
		Keep   uint64 `json:"keep"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	if req.Seq > 0 && req.Keep > 0 {
		return nil, newAPIError(400, 10003, "bad request")
	}
	if st.config().Sealed {
		return nil, errStreamSealed()
	}
	if st.config().DenyPurge {
		return nil, newAPIError(400, 10083, "stream purge is not permitted")
	}
	n, err := st.log.Purge(jetlog.PurgeOptions{Subject: req.Filter, Seq: req.Seq, Keep: req.Keep})
	if err != nil {
		return nil, svc.storageFailed(typeStreamPurge, name, err)
	}
	return struct {
		Type    string `json:"type"`
		Success bool   `json:"success"`
		Purged  uint64 `json:"purged"`
	}{typeStreamPurge, true, n}, nil
}

type pageRequest struct {
	Offset  int    `json:"offset"`
	Subject string `json:"subject"`
}

func (svc *Service) streamList(r apiRequest) (any, *apiError) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	return listPage(typeStreamList, "streams", svc.matchingStreams(req.Subject), req.Offset, listLimit,
		func(st *stream) streamInfo { return st.info("") }), nil
}

func (svc *Service) streamNames(r apiRequest) (any, *apiError) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	return listPage(typeStreamNames, "streams", svc.matchingStreams(req.Subject), req.Offset, namesLimit,
		func(st *stream) string { return st.name }), nil
}

// matchingStreams lists streams, only those whose subjects overlap subject
// when it is set.
func (svc *Service) matchingStreams(subject string) []*stream {
	all := svc.sortedStreams()
	if subject == "" {
		return all
	}
	var out []*stream
	for _, st := range all {
		for _, s := range st.config().Subjects {
			if subjects.Overlap(s, subject) {
				out = append(out, st)
				break
			}
		}
	}
	return out
}

// listPage is the response to a LIST or NAMES request: the page of all
// at offset, each element as item makes it.
func listPage[T, V any](typ, key string, all []T, offset, limit int, item func(T) V) map[string]any {
	items := []V{}
	for _, x := range page(all, offset, limit) {
		items = append(items, item(x))
	}
	return paged(typ, key, len(all), offset, limit, items)
}

// paged builds a LIST or NAMES response with its items under key.
func paged[T any](typ, key string, total, offset, limit int, items []T) map[string]any {
	return map[string]any{"type": typ, "total": total, "offset": offset, "limit": limit, key: items}
}

func page[T any](all []T, offset, limit int) []T {
	if offset < 0 || offset >= len(all) {
		return nil
	}
	return all[offset:min(len(all), offset+limit)]
}

type msgGetRequest struct {
	Seq        uint64 `json:"seq"`
	LastBySubj string `json:"last_by_subj"`
	NextBySubj string `json:"next_by_subj"`
}

// lookup finds the message a get request names.
func (st *stream) lookup(req msgGetRequest) (jetlog.Msg, error) {
	switch {
	case req.LastBySubj != "":
		return st.log.LastBySubject(req.LastBySubj)
	case req.NextBySubj != "":
		return st.log.Next(max(req.Seq, 1), req.NextBySubj)
	default:
		return st.log.Get(req.Seq)
	}
}

func (svc *Service) msgGet(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		return nil, e
	}
	var req msgGetRequest
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	m, err := st.lookup(req)
	if err != nil {
		return nil, errNoMessageFound()
	}
	if !svc.mayRead(r.from, m.Subject) {
		return nil, errMayNotRead(r.from, m.Subject)
	}
	return struct {
		Type    string    `json:"type"`
		Message storedMsg `json:"message"`
	}{typeMsgGet, storedMsg{Subject: m.Subject, Seq: m.Seq, Header: m.Header, Data: m.Data, Time: m.Time.UTC()}}, nil
}

func (svc *Service) msgDelete(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		return nil, e
	}
	var req struct {
		Seq uint64 `json:"seq"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	if st.config().Sealed {
		return nil, errStreamSealed()
	}
	if st.config().DenyDelete {
		return nil, newAPIError(400, 10082, "message delete not permitted")
	}
	if err := st.log.Delete(req.Seq); errors.Is(err, jetlog.ErrNotFound) {
		return nil, newAPIError(400, 10057, "no message found")
	} else if err != nil {
		return nil, svc.storageFailed(typeMsgDelete, name, err)
	}
	return successResponse{Type: typeMsgDelete, Success: true}, nil
}
