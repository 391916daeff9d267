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

// connFlags are how the client commands reach a server, with the nats
// CLI's names where it has them.
type connFlags struct {
	server, user, password, token string
	timeout                       time.Duration
}

func (f *connFlags) register(cmd *cobra.Command) {
	url := os.Getenv("NATS_URL")
	if url == "" {
		url = nats.DefaultURL
	}
	cmd.PersistentFlags().StringVarP(&f.server, "server", "s", url, "server URL (or $NATS_URL)")
	cmd.PersistentFlags().StringVar(&f.user, "user", os.Getenv("NATS_USER"), "user name (or $NATS_USER)")
	cmd.PersistentFlags().StringVar(&f.password, "password", os.Getenv("NATS_PASSWORD"), "password (or $NATS_PASSWORD)")
	cmd.PersistentFlags().StringVar(&f.token, "token", "", "authentication token")
	cmd.PersistentFlags().DurationVar(&f.timeout, "timeout", 5*time.Second, "time to wait for the server")
}

func (f *connFlags) connect() (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("bus dlq"), nats.Timeout(f.timeout), nats.MaxReconnects(0)}
	if f.user != "" {
		opts = append(opts, nats.UserInfo(f.user, f.password))
	}
	if f.token != "" {
		opts = append(opts, nats.Token(f.token))
	}
	nc, err := nats.Connect(f.server, opts...)
	if err != nil {
		return nil, &exitError{exitFailure, fmt.Errorf("connect to %s: %w", f.server, err)}
	}
	return nc, nil
}

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

// signalContext ends on an interrupt, so ^C stops a long redrive between
// batches' messages.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}
