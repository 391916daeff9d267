package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/bus-dev/bus/snapshot"
)

// restoreChunk is the size of the chunks a restore sends.
const restoreChunk = 128 << 10

func newRestoreCmd() *cobra.Command {
	var conn connFlags
	var name string
	var subjects []string
	cmd := &cobra.Command{
		Use:   "restore DIR [INCREMENT_DIR ...]",
		Short: "Restore a stream from a full backup and its increments",
		Long: `Restore the stream backed up in DIR (by bus backup or nats stream
backup), then the increments after it, in order, over the client port
through $JS.API.STREAM.RESTORE. Every piece is checked whole first (its
checksums, that each increment starts where the one before ends, that all
are of one stream): a damaged, incomplete or missing piece is named and
nothing is sent. The stream must not exist; it is created only once the
server has checked everything it was sent, so an existing stream is never
touched. --name restores under another name (with --subjects, beside the
original). Exit codes: 0 restored, 1 failed (server, network), 2 bad
usage, 3 a piece is damaged, incomplete or out of order, 4 the stream
exists (docs/backup.md).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			chain, err := chainPieces(args)
			if err != nil {
				return &exitError{exitDamaged, err}
			}
			last := chain[len(chain)-1]
			cfg := last.meta.Config
			if name != "" {
				cfg["name"] = name
			}
			if len(subjects) > 0 {
				cfg["subjects"] = subjects
			}
			target, _ := cfg["name"].(string)
			nc, err := conn.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			if err := sendRestore(nc, chain, cfg, conn.timeout); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: restored seqs %d..%d from %s", target, last.man.FirstSeq, last.man.LastSeq, chain[0].dir)
			if len(chain) > 1 {
				fmt.Fprintf(cmd.OutOrStdout(), " and %d increments", len(chain)-1)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "restore under this stream name")
	cmd.Flags().StringSliceVar(&subjects, "subjects", nil, "the restored stream's subjects, instead of the backed-up ones")
	return cmd
}

// sendRestore asks for the restore, sends the chain joined into one
// snapshot in chunks, and waits for the server's verdict.
func sendRestore(nc *nats.Conn, chain []*piece, cfg map[string]any, timeout time.Duration) error {
	name, _ := cfg["name"].(string)
	last := chain[len(chain)-1]
	req, _ := json.Marshal(map[string]any{"config": cfg, "state": last.meta.State})
	msg, err := nc.Request("$JS.API.STREAM.RESTORE."+name, req, timeout)
	if err != nil {
		return &exitError{exitFailure, fmt.Errorf("restore of %s: %w", name, err)}
	}
	var resp struct {
		Error          *apiErr `json:"error"`
		DeliverSubject string  `json:"deliver_subject"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return &exitError{exitFailure, fmt.Errorf("restore of %s: %w", name, err)}
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == 10130 {
			return &exitError{exitExists, fmt.Errorf("stream %s exists and is left as it is: delete it first, or restore with --name (and --subjects)", name)}
		}
		return &exitError{exitFailure, fmt.Errorf("restore of %s: %w", name, resp.Error)}
	}
	r, done := joinedSnapshot(chain)
	defer done()
	buf := make([]byte, restoreChunk)
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if _, err := nc.Request(resp.DeliverSubject, buf[:n], timeout); err != nil {
				return &exitError{exitFailure, fmt.Errorf("restore of %s: a chunk was not taken: %w", name, err)}
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return &exitError{exitFailure, fmt.Errorf("restore of %s: %w", name, rerr)}
		}
	}
	// The server checks and builds the stream before it answers.
	msg, err = nc.Request(resp.DeliverSubject, nil, max(timeout, time.Minute))
	if err != nil {
		return &exitError{exitFailure, fmt.Errorf("restore of %s: no answer after the last chunk: %w", name, err)}
	}
	var created struct {
		Error *apiErr `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &created); err != nil {
		return &exitError{exitFailure, fmt.Errorf("restore of %s: %w", name, err)}
	}
	if created.Error != nil {
		code := exitFailure
		if strings.Contains(created.Error.Description, "snapshot is") {
			code = exitDamaged
		}
		return &exitError{code, fmt.Errorf("restore of %s: %w", name, created.Error)}
	}
	return nil
}

// joinedSnapshot is the chain as one full snapshot. A single full backup
// is sent as it is; a chain is encoded again, on a goroutine, into a
// pipe: the full backup's messages still in the stream at the last cut
// (seq at or above its first seq), each increment's, and the last
// piece's consumers, which are the state at the last cut.
func joinedSnapshot(chain []*piece) (io.Reader, func()) {
	if len(chain) == 1 {
		f, err := os.Open(chain[0].data)
		if err != nil {
			return errReader{err}, func() {}
		}
		return f, func() { _ = f.Close() }
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeJoined(chain, pw)) }()
	return pr, func() { _ = pr.Close() }
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func writeJoined(chain []*piece, w io.Writer) error {
	sw, err := snapshot.NewWriter(w)
	if err != nil {
		return err
	}
	last := chain[len(chain)-1]
	first := last.man.FirstSeq
	var end snapshot.End
	for i, p := range chain {
		f, err := os.Open(p.data)
		if err != nil {
			return err
		}
		err = snapshot.Read(f, snapshot.Visitor{
			Header: func(h snapshot.Header) error {
				if i > 0 {
					return nil
				}
				h.FirstSeq, h.LastSeq, h.AfterSeq = first, last.man.LastSeq, 0
				return sw.JSON(snapshot.KindHeader, h)
			},
			Msg: func(m snapshot.Msg) error {
				if m.Seq < first {
					return nil // removed from the stream (a limit, a purge) by the last cut
				}
				end.Messages++
				return sw.Msg(m)
			},
			Consumer: func(c snapshot.Consumer) error {
				if p != last {
					return nil
				}
				end.Consumers++
				return sw.JSON(snapshot.KindConsumer, c)
			},
		})
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p.dir, err)
		}
	}
	if err := sw.JSON(snapshot.KindEnd, end); err != nil {
		return err
	}
	return sw.Close()
}
