package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/bus-dev/bus/jetlog"
)

// storeVerifySubject is bus's online store check (docs/api.md); the
// stream's name follows it.
const storeVerifySubject = "$BUS.API.STORE.VERIFY."

// onlineVerify is how `bus store verify` reaches a running bus: the nats
// CLI's connection flags. It checks one stream there, through
// $BUS.API.STORE.VERIFY.<stream>, instead of a store directory.
type onlineVerify struct {
	conn   connFlags
	online bool
	wait   time.Duration
	rateMB int64 // MiB a second the check may read; 0: no bound
}

func (o *onlineVerify) register(cmd *cobra.Command) {
	o.conn.register(cmd)
	cmd.Flags().BoolVar(&o.online, "online", false, "check STREAM on a running bus (implied by -s or --context), reached as $NATS_URL or the nats context say")
	cmd.Flags().Int64Var(&o.rateMB, "rate-mb", 0, "read at most this many MiB a second, for a disk publishes share (0: as fast as it goes)")
	cmd.Flags().DurationVar(&o.wait, "wait", 30*time.Minute, "how long to wait for the server's answer (a large stream takes a while)")
}

// chosen reports whether the command checks a running bus: only when
// asked on the command line, so that $NATS_URL alone never turns a
// directory into a stream name.
func (o *onlineVerify) chosen(cmd *cobra.Command) bool {
	fl := cmd.Flags()
	return o.online || fl.Changed("server") || fl.Changed("context")
}

// verifyResponse is $BUS.API.STORE.VERIFY's answer: the report offline
// verify prints, beside the API's type, error and ok.
type verifyResponse struct {
	Type  string `json:"type"`
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error,omitempty"`
	OK bool `json:"ok"`
	*jetlog.VerifyReport
}

// run asks the server to check stream and prints its report as the
// offline command does, with its exit codes: 0 no damage, 1 the check
// could not be made (no such stream, no rights, a verify already
// running, the server unreachable), 3 damage found.
func (o *onlineVerify) run(stream string, out io.Writer) error {
	nc, err := o.conn.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := signalContext()
	defer cancel()
	ctx, cancelWait := context.WithTimeout(ctx, o.wait)
	defer cancelWait()
	rep, err := requestVerify(ctx, nc, stream, o.rateMB<<20)
	if err != nil {
		return err
	}
	if rep.Write(out) {
		return &exitError{exitDamaged, fmt.Errorf("1 of 1 streams damaged")}
	}
	fmt.Fprintln(out, "1 streams, no damage")
	return nil
}

func requestVerify(ctx context.Context, nc *nats.Conn, stream string, rate int64) (*jetlog.VerifyReport, error) {
	body := []byte("{}")
	if rate > 0 {
		body = fmt.Appendf(nil, `{"max_bytes_per_second":%d}`, rate)
	}
	msg, err := nc.RequestWithContext(ctx, storeVerifySubject+stream, body)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, &exitError{exitFailure, fmt.Errorf("verify %s: no bus answers %s (not a bus, or JetStream is off)", stream, storeVerifySubject+stream)}
	case err != nil:
		return nil, &exitError{exitFailure, fmt.Errorf("verify %s: %w", stream, err)}
	}
	var resp verifyResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, &exitError{exitFailure, fmt.Errorf("verify %s: unreadable answer: %w", stream, err)}
	}
	if e := resp.Error; e != nil {
		return nil, &exitError{exitFailure, fmt.Errorf("verify %s: %s (%d/%d)", stream, e.Description, e.Code, e.ErrCode)}
	}
	if resp.VerifyReport == nil {
		return nil, &exitError{exitFailure, fmt.Errorf("verify %s: the answer holds no report", stream)}
	}
	return resp.VerifyReport, nil
}
