package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Retained messages, stored as the reference stores them: in the
// account's $MQTT_rmsgs stream (file storage, subjects $MQTT.rmsgs.>,
// one message per subject, so a new record replaces the topic's last),
// records in mqttretainrecord.go's format. The stream is created the
// first time an MQTT client of the account publishes or subscribes, and
// read back into the account's retainedIndex then, which also makes a
// restarted bus find its retained messages again. The listener talks to
// the stream through the JetStream API (localRequestVia), so NATS tools
// see and manage it as any stream.
//
// A retained PUBLISH is stored before it is routed: its PUBLISH waits
// for the store's ack, so a SUBSCRIBE after it finds it. A SUBSCRIBE
// looks up the index and, when it has matches, reads the matching
// records from the stream (mqttretainfetch.go, mqttretainsend.go).

// mqttRetainedTimeout bounds one request to the account's JetStream
// (the reference's default js_api_timeout).
const mqttRetainedTimeout = 5 * time.Second

// mqttRetainedSet is the listener's retained messages, one mqttRetained
// per account, by account name (a reload may replace an account's
// struct but not its stream).
type mqttRetainedSet struct {
	mu        sync.Mutex // guards byAccount; taken alone
	byAccount map[string]*mqttRetained
}

func (m *mqttRetainedSet) of(acc *account) *mqttRetained {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.byAccount[acc.name]
	if r == nil {
		if m.byAccount == nil {
			m.byAccount = map[string]*mqttRetained{}
		}
		r = &mqttRetained{}
		m.byAccount[acc.name] = r
	}
	return r
}

// mqttRetained is one account's retained messages: the index of its
// $MQTT_rmsgs stream, once opened.
type mqttRetained struct {
	mu      sync.Mutex // guards the fields below; never held across a request
	opened  bool
	opening chan struct{} // non-nil while one goroutine opens; closed when it is done
	index   retainedIndex
}

// jetStreamIn reports whether acc has a JetStream, where retained
// messages can be stored.
func (s *Server) jetStreamIn(acc *account) bool {
	if acc == s.global {
		return s.js != nil
	}
	return acc.js.Load() != nil
}

// retainedOf is acc's retained messages, opened: its stream created or
// found and read into the index.
func (s *Server) retainedOf(acc *account) (*mqttRetained, error) {
	r := s.mqtt.retained.of(acc)
	for {
		r.mu.Lock()
		if r.opened {
			r.mu.Unlock()
			return r, nil
		}
		if ch := r.opening; ch != nil {
			r.mu.Unlock()
			<-ch // bounded: the opener's requests time out
			continue
		}
		ch := make(chan struct{})
		r.opening = ch
		r.mu.Unlock()
		var index retainedIndex
		err := s.openRetained(acc, &index)
		r.mu.Lock()
		r.opening = nil
		if err == nil {
			r.opened, r.index = true, index
		}
		r.mu.Unlock()
		close(ch)
		if err != nil {
			return nil, fmt.Errorf("mqtt: retained messages of account %q: %w", acc.name, err)
		}
		return r, nil
	}
}

type mqttStreamInfo struct {
	Config mqttStreamConfig `json:"config"`
	State  struct {
		Msgs     uint64 `json:"messages"`
		FirstSeq uint64 `json:"first_seq"`
	} `json:"state"`
}

// mqttAPIError is the error of a JetStream API reply.
type mqttAPIError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *mqttAPIError) Error() string {
	return fmt.Sprintf("%s (%d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// retainedAPI sends req (JSON) to a $JS.API subject in acc as the server
// itself and decodes the reply into resp; an error reply is a
// *mqttAPIError.
func (s *Server) retainedAPI(acc *account, subject string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), mqttRetainedTimeout)
	defer cancel()
	reply, err := s.localRequestVia(ctx, acc, fullRights, subject, mqttJSAPrefix, nil, body)
	if err != nil {
		return err
	}
	return decodeAPIReply(reply.Data, resp)
}

func decodeAPIReply(data []byte, resp any) error {
	var e struct {
		Error *mqttAPIError `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return fmt.Errorf("bad JetStream reply %q: %w", data, err)
	}
	if e.Error != nil {
		return e.Error
	}
	if resp == nil {
		return nil
	}
	return json.Unmarshal(data, resp)
}

// openRetained creates acc's $MQTT_rmsgs with the reference's config, or
// finds it, and reads its records into index.
func (s *Server) openRetained(acc *account, index *retainedIndex) error {
	want := mqttStreamConfig{Name: mqttRetainedStream, Subjects: []string{mqttRetainedPrefix + ">"},
		Retention: "limits", Storage: "file", Replicas: 1, MaxMsgsPer: 1}
	var info mqttStreamInfo
	err := s.retainedAPI(acc, "$JS.API.STREAM.INFO."+mqttRetainedStream, struct{}{}, &info)
	var apiErr *mqttAPIError
	if errors.As(err, &apiErr) && apiErr.ErrCode == jsErrStreamNotFound {
		err = s.retainedAPI(acc, "$JS.API.STREAM.CREATE."+mqttRetainedStream, want, &info)
	}
	if err != nil {
		return err
	}
	if c := info.Config; !slices.Equal(c.Subjects, want.Subjects) || c.MaxMsgsPer != 1 {
		return fmt.Errorf("stream %s has subjects %q and max_msgs_per_subject %d; it needs %q and 1",
			mqttRetainedStream, c.Subjects, c.MaxMsgsPer, want.Subjects)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	start := time.Now()
	err = s.fetchRetained(acc, []string{mqttRetainedPrefix + ">"}, func(r fetchedRecord) bool {
		if len(r.data) > 0 && r.seq > 0 && len(r.subject) > len(mqttRetainedPrefix) {
			index.set(r.subject[len(mqttRetainedPrefix):], r.seq)
		}
		return true
	})
	if err != nil {
		return err
	}
	s.log.Info("mqtt retained messages loaded", "account", acc.name, "topics", index.size, "took", time.Since(start).String())
	return nil
}

// storeRetained stores rec as subject's retained message in acc, or,
// with an empty payload, clears subject's: the empty record replaces the
// last one, then is deleted itself, as the reference does it.
func (s *Server) storeRetained(acc *account, subject string, rec *mqttRetainedRecord) error {
	r, err := s.retainedOf(acc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), mqttRetainedTimeout)
	defer cancel()
	reply, err := s.localRequestVia(ctx, acc, fullRights, mqttRetainedPrefix+subject, mqttJSAPrefix, rec.header(), rec.payload)
	if err != nil {
		return err
	}
	var ack struct {
		Seq uint64 `json:"seq"`
	}
	if err := decodeAPIReply(reply.Data, &ack); err != nil {
		return err
	}
	r.mu.Lock()
	if len(rec.payload) == 0 {
		r.index.remove(subject, ack.Seq)
	} else {
		r.index.set(subject, ack.Seq)
	}
	r.mu.Unlock()
	if len(rec.payload) == 0 {
		return s.retainedAPI(acc, "$JS.API.STREAM.MSG.DELETE."+mqttRetainedStream, struct {
			Seq     uint64 `json:"seq"`
			NoErase bool   `json:"no_erase"`
		}{ack.Seq, true}, nil)
	}
	return nil
}

// retainedRef is an index entry: a subject and its record's seq.
type retainedRef struct {
	subject string
	seq     uint64
}

// matching is the index entries whose subjects match one of patterns,
// in stream order, when there are at most limit; many says there are
// more (refs is then nil).
func (r *mqttRetained) matching(limit int, patterns ...string) (refs []retainedRef, many bool) {
	r.mu.Lock()
	for _, p := range patterns {
		r.index.match(p, func(toks []string, seq uint64) {
			if len(refs) <= limit {
				refs = append(refs, retainedRef{strings.Join(toks, "."), seq})
			} else {
				many = true
			}
		})
	}
	r.mu.Unlock()
	if many || len(refs) > limit {
		return nil, true
	}
	slices.SortFunc(refs, func(a, b retainedRef) int { return cmp.Compare(a.seq, b.seq) })
	return refs, false
}

// forget drops an index entry whose record the stream no longer has (a
// clear that overtook an earlier publish, or a record the stream's own
// limits removed), found when a read misses it.
func (r *mqttRetained) forget(ref retainedRef) {
	r.mu.Lock()
	r.index.remove(ref.subject, ref.seq)
	r.mu.Unlock()
}

// retainedGet reads the record at seq with a message get; found is
// false when the stream no longer has it.
func (s *Server) retainedGet(acc *account, seq uint64) (rec fetchedRecord, found bool, err error) {
	var resp struct {
		Message struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Header  []byte `json:"hdrs"`
			Data    []byte `json:"data"`
		} `json:"message"`
	}
	err = s.retainedAPI(acc, "$JS.API.STREAM.MSG.GET."+mqttRetainedStream, struct {
		Seq uint64 `json:"seq"`
	}{seq}, &resp)
	var apiErr *mqttAPIError
	if errors.As(err, &apiErr) && apiErr.ErrCode == jsErrNoMessage {
		return fetchedRecord{}, false, nil
	}
	if err != nil {
		return fetchedRecord{}, false, err
	}
	m := resp.Message
	return fetchedRecord{subject: m.Subject, seq: m.Seq, header: m.Header, data: m.Data}, true, nil
}
