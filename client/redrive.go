package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RedriveRequest selects the dead letters of a dead-letter stream to move
// back to the subjects they came from (bus only: the server's
// $BUS.API.DLQ.REDRIVE API, docs/api.md). The zero value selects all.
type RedriveRequest struct {
	Seq          uint64 `json:"seq,omitempty"`           // just this one
	FromSeq      uint64 `json:"from_seq,omitempty"`      // a range, inclusive
	ToSeq        uint64 `json:"to_seq,omitempty"`        //
	Filter       string `json:"filter,omitempty"`        // subjects of the dead-letter stream
	OriginStream string `json:"origin_stream,omitempty"` // the stream they died in
	Consumer     string `json:"consumer,omitempty"`      // the consumer that gave up on them
	Max          int    `json:"max,omitempty"`           // per batch (server default 1,000, at most 10,000)
	Rate         int    `json:"rate,omitempty"`          // messages per second (server default 1,000)
	Keep         bool   `json:"keep,omitempty"`          // leave them in the dead-letter stream too
}

// RedriveFailure is a dead letter that could not be moved, and why. It
// stays in the dead-letter stream.
type RedriveFailure struct {
	Seq    uint64 `json:"seq"`
	Reason string `json:"reason"`
}

// RedriveResult counts what a redrive did.
type RedriveResult struct {
	Redriven int              `json:"redriven"`
	Skipped  int              `json:"skipped"` // not dead letters, or not selected
	Kept     int              `json:"kept"`    // moved but left in place (Keep, deny_delete)
	Failed   []RedriveFailure `json:"failed,omitempty"`
	NextSeq  uint64           `json:"next_seq"` // where the next batch starts; 0 when done
}

// ErrRedrive is a redrive the server refused (no such stream, a bad
// request, no permission, too many redrives at once).
var ErrRedrive = errors.New("client: redrive refused")

// Redrive moves the dead letters req selects from stream dlq back to
// their original subjects, a batch per request, until none are left or
// ctx ends. progress, if not nil, gets each batch's result. The result is
// the sum of the batches.
func (c *Conn) Redrive(ctx context.Context, dlq string, req RedriveRequest, progress func(RedriveResult)) (RedriveResult, error) {
	var total RedriveResult
	for {
		batch, err := c.redriveBatch(ctx, dlq, req)
		if err != nil {
			return total, err
		}
		total.Redriven += batch.Redriven
		total.Skipped += batch.Skipped
		total.Kept += batch.Kept
		total.Failed = append(total.Failed, batch.Failed...)
		if progress != nil {
			progress(batch)
		}
		if batch.NextSeq == 0 || req.Seq != 0 {
			return total, nil
		}
		req.FromSeq = batch.NextSeq
	}
}

func (c *Conn) redriveBatch(ctx context.Context, dlq string, req RedriveRequest) (RedriveResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return RedriveResult{}, err
	}
	// A batch is paced by the server: give it the time its rate needs.
	n, rate := max(req.Max, 1000), max(req.Rate, 1)
	if req.Rate == 0 {
		rate = 1000
	}
	wait := time.Duration(n)*time.Second/time.Duration(rate) + 30*time.Second
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	msg, err := c.nc.RequestWithContext(rctx, "$BUS.API.DLQ.REDRIVE."+dlq, body)
	if err != nil {
		return RedriveResult{}, fmt.Errorf("client: redrive %s: %w", dlq, err)
	}
	var resp struct {
		RedriveResult
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return RedriveResult{}, fmt.Errorf("client: redrive %s: bad answer: %w", dlq, err)
	}
	if resp.Error != nil {
		return RedriveResult{}, fmt.Errorf("%w: %s (%d/%d)", ErrRedrive, resp.Error.Description, resp.Error.Code, resp.Error.ErrCode)
	}
	return resp.RedriveResult, nil
}
