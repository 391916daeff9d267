package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
)

// backupIdle is how long a backup waits for the server's next chunk.
const backupIdle = 30 * time.Second

func newBackupCmd() *cobra.Command {
	var conn connFlags
	var prev string
	cmd := &cobra.Command{
		Use:   "backup STREAM DIR",
		Short: "Back a stream up, in full or from where an earlier backup ended",
		Long: `Back STREAM up into DIR (created; it must not hold a backup already)
over the client port, through $JS.API.STREAM.SNAPSHOT: a cut at one seq
while publishes go on, with the durable consumers' state at that cut.
DIR holds natscli's files (so 'nats stream restore DIR' takes a full
backup) and bus-backup.json, which says where the backup ends.

With --incremental PREVDIR only the messages after the seq where PREVDIR
ends are taken (and the consumers' state now); 'bus restore FULL INCR...'
applies them in order. Exit codes: 0 done, 1 failed (server, network,
disk), 2 bad usage, 3 PREVDIR is damaged or not of this stream
(docs/backup.md).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var after uint64
			var base *piece
			if prev != "" {
				p, err := openPiece(prev)
				if err != nil {
					return &exitError{exitDamaged, err}
				}
				if p.man.Stream != args[0] {
					return &exitError{exitDamaged, damaged(prev, "a backup of %s, not of %s", p.man.Stream, args[0])}
				}
				base, after = p, p.man.LastSeq
			}
			nc, err := conn.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			m, err := takeBackup(nc, args[0], args[1], after, conn.timeout)
			if err != nil {
				return err
			}
			if base != nil && !m.Created.Equal(base.man.Created) {
				_ = os.Remove(filepath.Join(args[1], backupManifestFile))
				return &exitError{exitDamaged, damaged(prev, "%s was deleted and created again since (created %s, then %s): take a full backup",
					args[0], base.man.Created.Format(time.RFC3339Nano), m.Created.Format(time.RFC3339Nano))}
			}
			kind := "full backup"
			if after > 0 {
				kind = fmt.Sprintf("increment after seq %d", after)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, seqs %d..%d, %d messages, %d consumers, %d bytes in %s\n",
				args[0], kind, max(m.FirstSeq, after+1), m.LastSeq, m.Messages, m.Consumers, m.Bytes, args[1])
			return nil
		},
	}
	conn.register(cmd)
	cmd.Flags().StringVar(&prev, "incremental", "", "back up only what came after the backup in this directory")
	return cmd
}

// snapshotReq is STREAM.SNAPSHOT's request, with bus's x_bus_after_seq.
type snapshotReq struct {
	DeliverSubject string `json:"deliver_subject"`
	ChunkSize      int    `json:"chunk_size"`
	WindowSize     int    `json:"window_size"`
	AfterSeq       uint64 `json:"x_bus_after_seq,omitempty"`
}

type apiErr struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *apiErr) Error() string {
	return fmt.Sprintf("%s (%d, err_code %d)", e.Description, e.Code, e.ErrCode)
}

// takeBackup receives stream's snapshot into dir, checks it, and writes
// the metadata and, last, the manifest.
// A backup that fails removes what it wrote of itself.
func takeBackup(nc *nats.Conn, stream, dir string, after uint64, timeout time.Duration) (m manifest, err error) {
	fail := func(err error) (manifest, error) { return manifest{}, &exitError{exitFailure, err} }
	for _, name := range []string{backupMetaFile, backupDataFile, backupLegacyData, backupManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return manifest{}, &exitError{exitUsage, fmt.Errorf("%s holds a backup already (%s): name a new directory", dir, name)}
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			for _, name := range []string{backupManifestFile, backupMetaFile, backupDataFile} {
				_ = os.Remove(filepath.Join(dir, name))
			}
		}
	}()
	deliver := nats.NewInbox()
	sub, err := nc.SubscribeSync(deliver)
	if err != nil {
		return fail(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	_ = sub.SetPendingLimits(-1, 64<<20)
	req, _ := json.Marshal(snapshotReq{DeliverSubject: deliver, ChunkSize: 128 << 10, WindowSize: 8 << 20, AfterSeq: after})
	msg, err := nc.Request("$JS.API.STREAM.SNAPSHOT."+stream, req, timeout)
	if err != nil {
		return fail(fmt.Errorf("snapshot of %s: %w", stream, err))
	}
	var resp struct {
		Error  *apiErr         `json:"error"`
		Config json.RawMessage `json:"config"`
		State  json.RawMessage `json:"state"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fail(fmt.Errorf("snapshot of %s: %w", stream, err))
	}
	if resp.Error != nil {
		return fail(fmt.Errorf("snapshot of %s: %w", stream, resp.Error))
	}
	data := filepath.Join(dir, backupDataFile)
	f, err := os.Create(data)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	sum := sha256.New()
	size, err := receiveChunks(sub, io.MultiWriter(f, sum))
	if err != nil {
		return fail(fmt.Errorf("snapshot of %s: %w", stream, err))
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	meta, _ := json.MarshalIndent(map[string]json.RawMessage{"config": resp.Config, "state": resp.State}, "", "  ")
	if err := writeFileSynced(filepath.Join(dir, backupMetaFile), meta); err != nil {
		return fail(err)
	}
	// Read back what was written: a backup is only as good as its file.
	p, err := openPiece(dir)
	if err != nil && !errors.Is(err, errDamaged) {
		return fail(err)
	}
	if err != nil {
		return fail(fmt.Errorf("the snapshot received does not check: %w", err))
	}
	m = p.man
	if p.man.AfterSeq != after {
		return fail(fmt.Errorf("the server sent messages after seq %d, not after %d: does it serve x_bus_after_seq?", p.man.AfterSeq, after))
	}
	m.Stream, m.Bytes, m.SHA256 = stream, size, hex.EncodeToString(sum.Sum(nil))
	man, _ := json.MarshalIndent(m, "", "  ")
	if err := writeFileSynced(filepath.Join(dir, backupManifestFile), man); err != nil {
		return fail(err)
	}
	if err := syncDir(dir); err != nil {
		return fail(err)
	}
	return m, nil
}

// receiveChunks writes the chunks to w, answering each to free its slot
// of the server's window, until the status message that ends them.
func receiveChunks(sub *nats.Subscription, w io.Writer) (int64, error) {
	var size int64
	for {
		m, err := sub.NextMsg(backupIdle)
		if err != nil {
			return size, fmt.Errorf("no chunk for %s: %w", backupIdle, err)
		}
		if len(m.Data) == 0 {
			status := m.Header.Get("Status")
			if status == "204" {
				return size, nil
			}
			return size, fmt.Errorf("the server ended the snapshot: %s %s", status, m.Header.Get("Description"))
		}
		if _, err := w.Write(m.Data); err != nil {
			return size, err
		}
		size += int64(len(m.Data))
		if err := m.Respond(nil); err != nil {
			return size, err
		}
	}
}
