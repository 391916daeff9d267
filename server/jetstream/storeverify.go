package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/bus-dev/bus/jetlog"
)

// The online store check, bus's own API (docs/api.md): a request on
// $BUS.API.STORE.VERIFY.<stream> reads back everything the stream has
// stored while it keeps serving (jetlog's Log.Verify) and answers with
// what is damaged, in the report `bus store verify` prints offline.
const (
	storeVerifyPrefix = "$BUS.API.STORE.VERIFY."
	typeStoreVerify   = "io.bus.api.v1.store_verify_response"
	// storeVerifyConcurrent bounds the verifies running at once (each
	// reads a whole stream from disk); one more gets 503, as does a
	// second verify of a stream already being verified.
	storeVerifyConcurrent = 2
)

// storeVerifyRequest is the request body, empty or {} for the defaults;
// an unknown field is refused, so one added later is never ignored by an
// older server.
type storeVerifyRequest struct {
	// MaxBytesPerSecond paces the reads (jetlog.VerifyOptions); 0 is
	// no bound.
	MaxBytesPerSecond int64 `json:"max_bytes_per_second,omitempty"`
}

// storeVerifyResponse is the answer: the report's fields at its top
// level beside ok, or an error in the JetStream API's shape.
type storeVerifyResponse struct {
	Type  string    `json:"type"`
	Error *apiError `json:"error,omitempty"`
	// OK is true when nothing is damaged; false with a report when
	// something is (Damaged() of the report), and with an error.
	OK bool `json:"ok"`
	*jetlog.VerifyReport
}

// storeVerifies is the streams being verified.
type storeVerifies struct {
	mu      sync.Mutex // guards running
	running map[string]bool
}

// begin takes a verify of stream, or reports why it must wait.
func (v *storeVerifies) begin(stream string) *apiError {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.running == nil {
		v.running = map[string]bool{}
	}
	if v.running[stream] {
		return newAPIError(503, 10023, "a verify of stream %s is running: try again when it has answered", stream)
	}
	if len(v.running) >= storeVerifyConcurrent {
		return errInsufficientResources()
	}
	v.running[stream] = true
	return nil
}

func (v *storeVerifies) end(stream string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.running, stream)
}

// captureStoreVerify takes a verify request off a reader goroutine; the
// verify runs on its own goroutine, since it reads the whole stream, and
// would otherwise hold an API lane.
func (svc *Service) captureStoreVerify(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	body := msg
	if hdr >= 0 {
		body = msg[hdr:]
	}
	name, replyTo := strings.TrimPrefix(string(subject), storeVerifyPrefix), string(reply)
	fail := func(e *apiError) bool {
		svc.replyTo(replyTo, typeStoreVerify).send(storeVerifyResponse{Type: typeStoreVerify, Error: e}, nil)
		return true
	}
	var req storeVerifyRequest
	if e := decodeStrict(body, &req); e != nil {
		return fail(e)
	}
	if req.MaxBytesPerSecond < 0 {
		return fail(newAPIError(400, 10003, "max_bytes_per_second %d: 0 (no bound) or more", req.MaxBytesPerSecond))
	}
	st, e := svc.lookup(name)
	if e != nil {
		return fail(e)
	}
	// What it answers (which seqs exist, were lost, were acknowledged)
	// is about the stream's messages: only to who may read them all, as
	// a snapshot (snapshot.go).
	if from != nil && !svc.sh.referenceReads && !from.MayRead(">") {
		if e := svc.sh.authorize(from, flow{reads: svc.sh.heldSubjects(st.config(), maxHeldDepth)}); e != nil {
			return fail(e)
		}
	}
	if e := svc.verifies.begin(name); e != nil {
		return fail(e)
	}
	svc.workers.Add(1)
	go func() {
		defer svc.workers.Done()
		defer svc.verifies.end(name)
		svc.replyTo(replyTo, typeStoreVerify).send(svc.verifyStream(st, jetlog.VerifyOptions{BytesPerSecond: req.MaxBytesPerSecond}), nil)
	}()
	return true
}

// verifyStream runs the check; a shutdown cancels it.
func (svc *Service) verifyStream(st *stream, opts jetlog.VerifyOptions) storeVerifyResponse {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-svc.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	rep, err := st.log.Verify(ctx, opts)
	switch {
	case errors.Is(err, jetlog.ErrClosed):
		// Deleted, or closed to be reopened, while it was checked.
		if _, e := svc.lookup(st.name); e != nil {
			return storeVerifyResponse{Type: typeStoreVerify, Error: e}
		}
		return storeVerifyResponse{Type: typeStoreVerify, Error: newAPIError(503, 10023, "stream %s was reopened during the verify: try again", st.name)}
	case errors.Is(err, context.Canceled):
		return storeVerifyResponse{Type: typeStoreVerify, Error: newAPIError(503, 10023, "the server is shutting down")}
	case err != nil:
		return storeVerifyResponse{Type: typeStoreVerify, Error: errStreamGeneric(err)}
	}
	rep.Stream = st.name
	return storeVerifyResponse{Type: typeStoreVerify, OK: !rep.Damaged(), VerifyReport: rep}
}

// decodeStrict is decodeBody refusing fields it does not know.
func decodeStrict(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return errInvalidJSON(err)
	}
	return nil
}
