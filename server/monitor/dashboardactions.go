package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// The dashboard's actions: purge a stream, delete one message, redrive
// one dead letter or a whole dead-letter stream. Each is the API request
// a client would send ($JS.API.STREAM.PURGE.<stream>,
// $JS.API.STREAM.MSG.DELETE.<stream>, $BUS.API.DLQ.REDRIVE.<stream>),
// sent as the logged-in user, after actionUser checked that the user may
// publish to that subject, as a PUB would be checked.
const (
	actionTimeout = 10 * time.Second
	// redriveAllTime bounds one "redrive all": batches are sent until
	// the stream is done or this passes; the answer says where it
	// stopped, and pressing again goes on.
	redriveAllTime  = 30 * time.Second
	redriveBatch    = 1000
	actionBodyLimit = 64 << 10
)

// decodeAction reads an action's optional JSON body into v.
func decodeAction(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, actionBodyLimit))
	if err != nil {
		dashboardError(w, http.StatusRequestEntityTooLarge, "request body over 64 KiB")
		return false
	}
	if len(body) == 0 {
		return true
	}
	if err := json.Unmarshal(body, v); err != nil {
		dashboardError(w, http.StatusBadRequest, "request body is not the JSON expected: "+err.Error())
		return false
	}
	return true
}

func (m *Server) dashboardPurge(w http.ResponseWriter, r *http.Request) {
	stream, ok := streamParam(w, r)
	if !ok {
		return
	}
	subject := "$JS.API.STREAM.PURGE." + stream
	from, code, why := m.actionUser(r, subject)
	if code != 0 {
		dashboardError(w, code, why)
		return
	}
	var resp struct {
		Purged uint64 `json:"purged"`
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	if err := m.apiCall(ctx, from, subject, nil, &resp); err != nil {
		dashboardFail(w, err)
		return
	}
	m.log.Info("dashboard purged a stream", "stream", stream, "user", from.User(), "purged", resp.Purged)
	dashboardJSON(w, http.StatusOK, resp)
}

func (m *Server) dashboardDelete(w http.ResponseWriter, r *http.Request) {
	stream, ok := streamParam(w, r)
	if !ok {
		return
	}
	seq, err := parseSeq(r.PathValue("seq"))
	if err != nil {
		dashboardError(w, http.StatusBadRequest, err.Error())
		return
	}
	subject := "$JS.API.STREAM.MSG.DELETE." + stream
	from, code, why := m.actionUser(r, subject)
	if code != 0 {
		dashboardError(w, code, why)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	if err := m.apiCall(ctx, from, subject, map[string]uint64{"seq": seq}, nil); err != nil {
		dashboardFail(w, err)
		return
	}
	m.log.Info("dashboard deleted a message", "stream", stream, "seq", seq, "user", from.User())
	dashboardJSON(w, http.StatusOK, map[string]any{"deleted": seq})
}

// redriveFailure and redriveResult are the redrive API's answer
// (docs/api.md, "Redrive"), summed over the batches of one action.
type redriveFailure struct {
	Seq    uint64 `json:"seq"`
	Reason string `json:"reason"`
}

type redriveResult struct {
	Redriven int              `json:"redriven"`
	Skipped  int              `json:"skipped"`
	Kept     int              `json:"kept"`
	Failed   []redriveFailure `json:"failed"`
	// NextSeq is where an unfinished "redrive all" stopped; 0 when done.
	NextSeq uint64 `json:"next_seq"`
}

// dashboardRedrive redrives {"seq":N}, or without a seq every dead
// letter of the stream, batch after batch.
func (m *Server) dashboardRedrive(w http.ResponseWriter, r *http.Request) {
	stream, ok := streamParam(w, r)
	if !ok {
		return
	}
	var req struct {
		Seq uint64 `json:"seq"`
	}
	if !decodeAction(w, r, &req) {
		return
	}
	subject := "$BUS.API.DLQ.REDRIVE." + stream
	from, code, why := m.actionUser(r, subject)
	if code != 0 {
		dashboardError(w, code, why)
		return
	}
	total := redriveResult{Failed: []redriveFailure{}}
	ctx, cancel := context.WithTimeout(r.Context(), redriveAllTime)
	defer cancel()
	batch := map[string]any{"seq": req.Seq}
	if req.Seq == 0 {
		batch = map[string]any{"from_seq": uint64(1), "max": redriveBatch}
	}
	for {
		var resp redriveResult
		// A batch of redriveBatch at the API's default rate takes about a
		// second, plus the acks.
		bctx, bcancel := context.WithTimeout(ctx, actionTimeout)
		err := m.apiCall(bctx, from, subject, batch, &resp)
		bcancel()
		if err != nil {
			var e *jsError
			if total.Redriven > 0 && !errors.As(err, &e) {
				break // out of time after some batches: report them
			}
			dashboardFail(w, err)
			return
		}
		total.Redriven += resp.Redriven
		total.Skipped += resp.Skipped
		total.Kept += resp.Kept
		total.Failed = append(total.Failed, resp.Failed...)
		total.NextSeq = resp.NextSeq
		if req.Seq != 0 || resp.NextSeq == 0 || resp.NextSeq <= batch["from_seq"].(uint64) || ctx.Err() != nil {
			break
		}
		batch["from_seq"] = resp.NextSeq
	}
	m.log.Info("dashboard redrove dead letters", "stream", stream, "user", from.User(),
		"redriven", total.Redriven, "failed", len(total.Failed), "next_seq", total.NextSeq)
	dashboardJSON(w, http.StatusOK, total)
}
