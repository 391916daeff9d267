package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// Page sizes of the reference's LIST and NAMES responses.
const (
	listLimit  = 256
	namesLimit = 1024
	// subjectsLimit is the page size of per-subject counts in STREAM.INFO.
	subjectsLimit = 100000
)

// handle dispatches one API request by subject. Unknown subjects get no
// answer at all, as with the reference.
func (js *jetStream) handle(r apiRequest) {
	js.apiTotal.Add(1)
	t := strings.Split(strings.TrimPrefix(r.subject, apiPrefix), ".")
	switch {
	case len(t) == 1 && t[0] == "INFO":
		js.accountInfo(r)
	case len(t) == 2 && t[0] == "STREAM" && t[1] == "LIST":
		js.streamList(r)
	case len(t) == 2 && t[0] == "STREAM" && t[1] == "NAMES":
		js.streamNames(r)
	case len(t) == 3 && t[0] == "STREAM":
		js.handleStream(r, t[1], t[2])
	case len(t) == 4 && t[0] == "STREAM" && t[1] == "MSG" && t[2] == "GET":
		js.msgGet(r, t[3])
	case len(t) == 4 && t[0] == "STREAM" && t[1] == "MSG" && t[2] == "DELETE":
		js.msgDelete(r, t[3])
	case len(t) >= 3 && t[0] == "DIRECT" && t[1] == "GET":
		js.directGet(r, t[2], strings.Join(t[3:], "."))
	case t[0] == "CONSUMER":
		js.handleConsumer(r, t[1:])
	}
}

func (js *jetStream) handleStream(r apiRequest, op, name string) {
	switch op {
	case "CREATE":
		js.streamCreate(r, name)
	case "UPDATE":
		js.streamUpdate(r, name)
	case "INFO":
		js.streamInfo(r, name)
	case "DELETE":
		js.streamDelete(r, name)
	case "PURGE":
		js.streamPurge(r, name)
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
	Type      string        `json:"type"`
	Memory    uint64        `json:"memory"`
	Storage   uint64        `json:"storage"`
	Streams   int           `json:"streams"`
	Consumers int           `json:"consumers"`
	Limits    accountLimits `json:"limits"`
	API       apiStats      `json:"api"`
}

type accountLimits struct {
	MaxMemory    int64 `json:"max_memory"`
	MaxStorage   int64 `json:"max_storage"`
	MaxStreams   int   `json:"max_streams"`
	MaxConsumers int   `json:"max_consumers"`
	MaxAckPend   int   `json:"max_ack_pending"`
}

type apiStats struct {
	Total  int64 `json:"total"`
	Errors int64 `json:"errors"`
}

func (js *jetStream) accountInfo(r apiRequest) {
	info := accountInfo{Type: typeAccountInfo, Limits: accountLimits{-1, -1, -1, -1, -1}}
	for _, st := range js.sortedStreams() {
		s := st.log.State()
		if st.cfg.Storage == "memory" {
			info.Memory += s.Bytes
		} else {
			info.Storage += s.Bytes
		}
		info.Streams++
		info.Consumers += st.numConsumers()
	}
	info.API = apiStats{Total: js.apiTotal.Load(), Errors: js.apiErrors.Load()}
	js.respond(r.reply, info)
}

func (js *jetStream) streamCreate(r apiRequest, name string) {
	var cfg streamConfig
	if len(bytes.TrimSpace(r.body)) == 0 {
		js.respondErr(r.reply, typeStreamCreate, errStreamNameMismatch())
		return
	}
	if e := decodeBody(r.body, &cfg); e != nil {
		js.respondErr(r.reply, typeStreamCreate, e)
		return
	}
	if cfg.Name != name {
		js.respondErr(r.reply, typeStreamCreate, errStreamNameMismatch())
		return
	}
	if e := cfg.normalize(); e != nil {
		js.respondErr(r.reply, typeStreamCreate, e)
		return
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if st, ok := js.streams[name]; ok {
		if !sameConfig(st.config(), cfg) {
			js.respondErr(r.reply, typeStreamCreate, errStreamNameInUse())
			return
		}
		info := st.info(typeStreamCreate)
		info.DidCreate = true
		js.respond(r.reply, info)
		return
	}
	if js.overlapsOthers(name, cfg.Subjects) {
		js.respondErr(r.reply, typeStreamCreate, errSubjectsOverlap())
		return
	}
	st, err := js.openStream(cfg, filepath.Join(js.dir, name))
	if err != nil {
		js.respondErr(r.reply, typeStreamCreate, errStreamGeneric(err))
		return
	}
	js.streams[name] = st
	info := st.info(typeStreamCreate)
	info.DidCreate = true
	js.respond(r.reply, info)
}

// overlapsOthers reports whether subjects collide with another stream's.
// Called with js.mu held.
func (js *jetStream) overlapsOthers(name string, subjects []string) bool {
	for other, st := range js.streams {
		if other == name {
			continue
		}
		for _, a := range st.config().Subjects {
			for _, b := range subjects {
				if overlaps(a, b) {
					return true
				}
			}
		}
	}
	return false
}

// sameConfig compares two normalized configs as clients see them.
func sameConfig(a, b streamConfig) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func (js *jetStream) streamUpdate(r apiRequest, name string) {
	st := js.stream(name)
	if st == nil {
		js.respondErr(r.reply, typeStreamUpdate, errStreamNotFound())
		return
	}
	var cfg streamConfig
	if e := decodeBody(r.body, &cfg); e != nil {
		js.respondErr(r.reply, typeStreamUpdate, e)
		return
	}
	if cfg.Name != name {
		js.respondErr(r.reply, typeStreamUpdate, errStreamNameMismatch())
		return
	}
	if e := cfg.normalize(); e != nil {
		js.respondErr(r.reply, typeStreamUpdate, e)
		return
	}
	old := st.config()
	switch {
	case cfg.Storage != old.Storage:
		js.respondErr(r.reply, typeStreamUpdate, errStreamConfig("stream configuration update can not change storage type"))
		return
	case cfg.Retention != old.Retention:
		js.respondErr(r.reply, typeStreamUpdate, errStreamConfig("stream configuration update can not change retention policy"))
		return
	}
	js.mu.Lock()
	overlap := js.overlapsOthers(name, cfg.Subjects)
	js.mu.Unlock()
	if overlap {
		js.respondErr(r.reply, typeStreamUpdate, errSubjectsOverlap())
		return
	}
	if err := st.log.UpdateConfig(cfg.logConfig()); err != nil {
		js.respondErr(r.reply, typeStreamUpdate, errStreamGeneric(err))
		return
	}
	st.mu.Lock()
	st.cfg = cfg
	st.mu.Unlock()
	if err := st.subscribe(); err != nil {
		js.respondErr(r.reply, typeStreamUpdate, errStreamGeneric(err))
		return
	}
	js.respond(r.reply, st.info(typeStreamUpdate))
}

// streamInfoResponse adds the paging fields the reference sends on INFO.
type streamInfoResponse struct {
	streamInfo
	Total  int `json:"total"`
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

func (js *jetStream) streamInfo(r apiRequest, name string) {
	st := js.stream(name)
	if st == nil {
		js.apiErrors.Add(1)
		js.respond(r.reply, struct {
			apiResponse
			Total  int `json:"total"`
			Offset int `json:"offset"`
			Limit  int `json:"limit"`
		}{apiResponse: apiResponse{Type: typeStreamInfo, Error: errStreamNotFound()}})
		return
	}
	var req struct {
		SubjectsFilter string `json:"subjects_filter"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeStreamInfo, e)
		return
	}
	resp := streamInfoResponse{streamInfo: st.info(typeStreamInfo)}
	if req.SubjectsFilter != "" {
		// Per-subject counts, as "nats stream subjects" asks for them.
		resp.State.Subjects = st.log.SubjectCounts(req.SubjectsFilter)
		resp.Total, resp.Limit = len(resp.State.Subjects), subjectsLimit
	}
	js.respond(r.reply, resp)
}

type successResponse struct {
	Type    string `json:"type"`
	Success bool   `json:"success"`
}

func (js *jetStream) streamDelete(r apiRequest, name string) {
	js.mu.Lock()
	st := js.streams[name]
	delete(js.streams, name)
	js.mu.Unlock()
	if st == nil {
		js.respondErr(r.reply, typeStreamDelete, errStreamNotFound())
		return
	}
	if err := st.destroy(); err != nil {
		js.respondErr(r.reply, typeStreamDelete, errStreamGeneric(err))
		return
	}
	js.respond(r.reply, successResponse{Type: typeStreamDelete, Success: true})
}

func (js *jetStream) streamPurge(r apiRequest, name string) {
	st := js.stream(name)
	if st == nil {
		js.respondErr(r.reply, typeStreamPurge, errStreamNotFound())
		return
	}
	var req struct {
		Filter string `json:"filter"`
		Seq    uint64 `json:"seq"`
		Keep   uint64 `json:"keep"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeStreamPurge, e)
		return
	}
	if st.config().DenyPurge {
		js.respondErr(r.reply, typeStreamPurge, newAPIError(400, 10083, "stream purge is not permitted"))
		return
	}
	n, err := st.log.Purge(jetlog.PurgeOptions{Subject: req.Filter, Seq: req.Seq, Keep: req.Keep})
	if err != nil {
		js.respondErr(r.reply, typeStreamPurge, errStreamGeneric(err))
		return
	}
	js.respond(r.reply, struct {
		Type    string `json:"type"`
		Success bool   `json:"success"`
		Purged  uint64 `json:"purged"`
	}{typeStreamPurge, true, n})
}

type pageRequest struct {
	Offset  int    `json:"offset"`
	Subject string `json:"subject"`
}

func (js *jetStream) streamList(r apiRequest) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeStreamList, e)
		return
	}
	all := js.matchingStreams(req.Subject)
	items := []streamInfo{}
	for _, st := range page(all, req.Offset, listLimit) {
		items = append(items, st.info(""))
	}
	js.respond(r.reply, paged(typeStreamList, "streams", len(all), req.Offset, listLimit, items))
}

func (js *jetStream) streamNames(r apiRequest) {
	var req pageRequest
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeStreamNames, e)
		return
	}
	all := js.matchingStreams(req.Subject)
	names := []string{}
	for _, st := range page(all, req.Offset, namesLimit) {
		names = append(names, st.name)
	}
	js.respond(r.reply, paged(typeStreamNames, "streams", len(all), req.Offset, namesLimit, names))
}

// matchingStreams lists streams, only those whose subjects overlap subject
// when it is set.
func (js *jetStream) matchingStreams(subject string) []*stream {
	all := js.sortedStreams()
	if subject == "" {
		return all
	}
	var out []*stream
	for _, st := range all {
		for _, s := range st.config().Subjects {
			if overlaps(s, subject) {
				out = append(out, st)
				break
			}
		}
	}
	return out
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

func (js *jetStream) msgGet(r apiRequest, name string) {
	st := js.stream(name)
	if st == nil {
		js.respondErr(r.reply, typeMsgGet, errStreamNotFound())
		return
	}
	var req msgGetRequest
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeMsgGet, e)
		return
	}
	m, err := st.lookup(req)
	if err != nil {
		js.respondErr(r.reply, typeMsgGet, errNoMessageFound())
		return
	}
	js.respond(r.reply, struct {
		Type    string    `json:"type"`
		Message storedMsg `json:"message"`
	}{typeMsgGet, storedMsg{Subject: m.Subject, Seq: m.Seq, Header: m.Header, Data: m.Data, Time: m.Time.UTC()}})
}

func (js *jetStream) msgDelete(r apiRequest, name string) {
	st := js.stream(name)
	if st == nil {
		js.respondErr(r.reply, typeMsgDelete, errStreamNotFound())
		return
	}
	var req struct {
		Seq uint64 `json:"seq"`
	}
	if e := decodeBody(r.body, &req); e != nil {
		js.respondErr(r.reply, typeMsgDelete, e)
		return
	}
	if st.config().DenyDelete {
		js.respondErr(r.reply, typeMsgDelete, newAPIError(400, 10082, "message delete not permitted"))
		return
	}
	if err := st.log.Delete(req.Seq); err != nil {
		if errors.Is(err, jetlog.ErrNotFound) {
			js.respondErr(r.reply, typeMsgDelete, newAPIError(400, 10057, "no message found"))
		} else {
			js.respondErr(r.reply, typeMsgDelete, errStreamGeneric(err))
		}
		return
	}
	js.respond(r.reply, successResponse{Type: typeMsgDelete, Success: true})
}

// directGet answers with the stored message itself, its headers followed
// by the Nats-Stream/Subject/Sequence/Time-Stamp ones nats.go requires.
func (js *jetStream) directGet(r apiRequest, name, lastFor string) {
	st := js.stream(name)
	if st == nil || !st.config().AllowDirect {
		return // the reference has no responder then
	}
	req := msgGetRequest{LastBySubj: lastFor}
	if lastFor == "" {
		if e := decodeBody(r.body, &req); e != nil {
			js.srv.sendInternal(r.reply, "", statusHeader("400 Bad Request"), nil)
			return
		}
	}
	m, err := st.lookup(req)
	if err != nil {
		js.srv.sendInternal(r.reply, "", statusHeader("404 Message Not Found"), nil)
		return
	}
	hdr := withHeader(m.Header, "Nats-Stream", st.name)
	hdr = withHeader(hdr, "Nats-Subject", m.Subject)
	hdr = withHeader(hdr, "Nats-Sequence", strconv.FormatUint(m.Seq, 10))
	hdr = withHeader(hdr, "Nats-Time-Stamp", m.Time.UTC().Format(time.RFC3339Nano))
	js.srv.sendInternal(r.reply, "", hdr, m.Data)
}
