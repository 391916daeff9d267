package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/bus-dev/bus/client"
)

func newDLQCmd() *cobra.Command {
	var conn connFlags
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Look at dead letters and move them back to where they came from",
		Long: `Dead letters are what a consumer with x_bus_dead_letter_subject gave up
on; a stream capturing that subject is the dead-letter queue (DLQ).
'bus dlq ls' lists a DLQ's dead letters with where they came from and
why they died; 'bus dlq redrive' moves them back to their original
subjects, at a bounded rate (docs/api.md, "Redrive").`,
	}
	conn.register(cmd)
	cmd.AddCommand(newDLQListCmd(&conn), newDLQRedriveCmd(&conn))
	return cmd
}

func newDLQListCmd(conn *connFlags) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "ls STREAM",
		Short: "List the dead letters of a dead-letter stream",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nc, err := conn.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, cancel := signalContext()
			defer cancel()
			return listDeadLetters(ctx, nc, args[0], limit, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 100, "list at most this many, oldest first")
	return cmd
}

func listDeadLetters(ctx context.Context, nc *nats.Conn, name string, limit int, out io.Writer) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return &exitError{exitFailure, err}
	}
	st, err := js.Stream(ctx, name)
	if err != nil {
		return &exitError{exitFailure, fmt.Errorf("stream %s: %w", name, err)}
	}
	info := st.CachedInfo()
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SEQ\tSTORED\tFROM STREAM\tSUBJECT\tCONSUMER\tDELIVERIES\tREASON\tSIZE")
	shown := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && shown < limit; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return &exitError{exitFailure, fmt.Errorf("get %s seq %d: %w", name, seq, err)}
		}
		h := m.Header
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", m.Sequence, m.Time.UTC().Format(time.RFC3339),
			orDash(h.Get("Bus-Dlq-Stream")), orDash(h.Get("Bus-Dlq-Subject")), orDash(h.Get("Bus-Dlq-Consumer")),
			orDash(h.Get("Bus-Dlq-Deliveries")), orDash(h.Get("Bus-Dlq-Reason")), len(m.Data))
		shown++
	}
	if err := w.Flush(); err != nil {
		return &exitError{exitFailure, err}
	}
	if rest := info.State.Msgs - uint64(shown); rest > 0 {
		fmt.Fprintf(out, "… and %d more (--limit)\n", rest)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newDLQRedriveCmd(conn *connFlags) *cobra.Command {
	var req client.RedriveRequest
	cmd := &cobra.Command{
		Use:   "redrive STREAM",
		Short: "Move dead letters back to their original subjects",
		Long: `Move the selected dead letters (all, by default) back to the subjects
they came from, in batches, at --rate messages a second. Each leaves the
dead-letter stream once its stream has stored it again (unless --keep);
one that cannot be moved stays, and is listed with the reason.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			nc, err := conn.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			c, err := client.New(nc, client.Options{})
			if err != nil {
				return &exitError{exitFailure, err}
			}
			ctx, cancel := signalContext()
			defer cancel()
			out := cmd.OutOrStdout()
			total, err := c.Redrive(ctx, args[0], req, func(b client.RedriveResult) {
				fmt.Fprintf(out, "batch: %d redriven, %d failed, %d skipped\n", b.Redriven, len(b.Failed), b.Skipped)
			})
			for _, f := range total.Failed {
				fmt.Fprintf(out, "seq %d not moved: %s\n", f.Seq, f.Reason)
			}
			if err != nil {
				if errors.Is(err, client.ErrRedrive) {
					return &exitError{exitUsage, err}
				}
				return &exitError{exitFailure, err}
			}
			kept := ""
			if total.Kept > 0 {
				kept = fmt.Sprintf(" (%d kept in the DLQ)", total.Kept)
			}
			fmt.Fprintf(out, "redriven %d%s, failed %d, skipped %d\n", total.Redriven, kept, len(total.Failed), total.Skipped)
			if len(total.Failed) > 0 {
				return &exitError{exitFailure, fmt.Errorf("%d dead letters could not be moved", len(total.Failed))}
			}
			if req.Seq != 0 && total.Redriven == 0 && total.Kept == 0 {
				return missingSeq(ctx, nc, args[0], req.Seq)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&req.Seq, "seq", 0, "redrive only this dead letter")
	f.Uint64Var(&req.FromSeq, "from", 0, "first seq of a range")
	f.Uint64Var(&req.ToSeq, "to", 0, "last seq of a range")
	f.StringVar(&req.Filter, "filter", "", "only dead letters on these subjects of the DLQ")
	f.StringVar(&req.OriginStream, "origin-stream", "", "only those that died in this stream")
	f.StringVar(&req.Consumer, "consumer", "", "only those this consumer gave up on")
	f.IntVar(&req.Rate, "rate", 0, "messages a second (server default 1000)")
	f.IntVar(&req.Max, "batch", 0, "messages per request (server default 1000)")
	f.BoolVar(&req.Keep, "keep", false, "leave the dead letters in the DLQ too")
	return cmd
}

// missingSeq says why --seq moved nothing: there is no message at that
// seq, or the message there is not a dead letter the filters select. A
// redrive of one named message that moves nothing is a mistake in the
// command line, not a quiet success.
func missingSeq(ctx context.Context, nc *nats.Conn, stream string, seq uint64) error {
	why := "is not a dead letter, or not one the filters select"
	if js, err := jetstream.New(nc); err == nil {
		if st, err := js.Stream(ctx, stream); err == nil {
			if _, err := st.GetMsg(ctx, seq); errors.Is(err, jetstream.ErrMsgNotFound) {
				why = "does not exist (deleted, redriven already, or past the last seq)"
			}
		}
	}
	return &exitError{exitUsage, fmt.Errorf("%s seq %d %s: nothing redriven", stream, seq, why)}
}

// signalContext ends on an interrupt, so ^C stops a long redrive between
// batches' messages.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}
