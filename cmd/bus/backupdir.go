package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bus-dev/bus/snapshot"
)

// A backup directory (docs/backup.md, "bus backup"): natscli's two files,
// so `nats stream restore DIR` takes a full one, and bus's manifest,
// written last, so a directory without it is a backup that did not end.
const (
	backupMetaFile     = "backup.json"   // the snapshot response: config and state
	backupDataFile     = "stream.arc.s2" // the snapshot, as natscli 0.5 names it
	backupLegacyData   = "stream.tar.s2" // natscli before 0.5
	backupManifestFile = "bus-backup.json"
	// backupDirVersion is the manifest's format; the snapshot inside has
	// its own (snapshot.Version).
	backupDirVersion = 1
)

// manifest is bus-backup.json: what the directory holds, to chain
// increments and to check the data before anything is sent.
type manifest struct {
	Version         int       `json:"version"`
	SnapshotVersion int       `json:"snapshot_version"`
	Stream          string    `json:"stream"`
	Created         time.Time `json:"stream_created"` // tells a recreated stream from the one backed up
	FirstSeq        uint64    `json:"first_seq"`
	LastSeq         uint64    `json:"last_seq"`            // where this backup ends
	AfterSeq        uint64    `json:"after_seq,omitempty"` // an increment: messages after this seq
	Messages        uint64    `json:"messages"`
	Consumers       int       `json:"consumers"`
	Bytes           int64     `json:"bytes"`
	SHA256          string    `json:"sha256"`
	Time            time.Time `json:"time"`
}

// piece is one backup directory as a restore reads it.
type piece struct {
	dir  string
	data string // path of the snapshot
	man  manifest
	meta restoreMeta
}

// restoreMeta is backup.json: what a STREAM.RESTORE request carries.
type restoreMeta struct {
	Config map[string]any  `json:"config"`
	State  json.RawMessage `json:"state"`
}

// errDamaged marks a backup that is damaged, incomplete or out of
// order: exit code exitDamaged.
var errDamaged = errors.New("backup refused")

func damaged(dir string, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", errDamaged, dir, fmt.Sprintf(format, args...))
}

// openPiece reads a backup directory's files and checks its snapshot
// whole: the manifest's checksum and counts, then every record
// (snapshot.Read). A natscli backup without a manifest is taken as a full
// backup once its snapshot passes.
func openPiece(dir string) (*piece, error) {
	p := &piece{dir: dir, data: filepath.Join(dir, backupDataFile)}
	if _, err := os.Stat(p.data); errors.Is(err, fs.ErrNotExist) {
		p.data = filepath.Join(dir, backupLegacyData)
	}
	raw, err := os.ReadFile(filepath.Join(dir, backupMetaFile))
	if err != nil {
		return nil, damaged(dir, "no %s: not a backup directory, or a backup that did not end", backupMetaFile)
	}
	if err := json.Unmarshal(raw, &p.meta); err != nil || p.meta.Config == nil {
		return nil, damaged(dir, "%s is not a backup's metadata (%v)", backupMetaFile, err)
	}
	raw, err = os.ReadFile(filepath.Join(dir, backupManifestFile))
	hasManifest := err == nil
	if hasManifest {
		if err := json.Unmarshal(raw, &p.man); err != nil {
			return nil, damaged(dir, "%s: %v", backupManifestFile, err)
		}
		if p.man.Version != backupDirVersion {
			return nil, damaged(dir, "backup directory format %d is not supported (this bus reads %d)", p.man.Version, backupDirVersion)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.Open(p.data)
	if err != nil {
		return nil, damaged(dir, "no snapshot data (%s)", backupDataFile)
	}
	defer f.Close()
	sum := sha256.New()
	var h snapshot.Header
	var end snapshot.End
	err = snapshot.Read(io.TeeReader(f, sum), snapshot.Visitor{
		Header: func(hh snapshot.Header) error { h = hh; return nil },
		End:    func(e snapshot.End) error { end = e; return nil },
	})
	if err != nil {
		return nil, damaged(dir, "%v", err)
	}
	if _, err := io.Copy(sum, f); err != nil { // what follows the end, for the checksum
		return nil, err
	}
	digest := hex.EncodeToString(sum.Sum(nil))
	if !hasManifest {
		p.man = manifest{Version: backupDirVersion, SnapshotVersion: h.Version, Created: h.Created,
			FirstSeq: h.FirstSeq, LastSeq: h.LastSeq, AfterSeq: h.AfterSeq, Messages: end.Messages, Consumers: end.Consumers, SHA256: digest, Time: h.Time}
		p.man.Stream, _ = p.meta.Config["name"].(string)
		return p, nil
	}
	switch {
	case digest != p.man.SHA256:
		return nil, damaged(dir, "snapshot data does not match its checksum in %s", backupManifestFile)
	case h.LastSeq != p.man.LastSeq || h.AfterSeq != p.man.AfterSeq || h.FirstSeq != p.man.FirstSeq || end.Messages != p.man.Messages:
		return nil, damaged(dir, "snapshot (seqs %d..%d after %d, %d messages) is not what %s says (%d..%d after %d, %d messages)",
			h.FirstSeq, h.LastSeq, h.AfterSeq, end.Messages, backupManifestFile, p.man.FirstSeq, p.man.LastSeq, p.man.AfterSeq, p.man.Messages)
	}
	return p, nil
}

// chainPieces opens the directories of a restore and checks they form
// one chain: a full backup, then increments each starting where the one
// before ended, of the same stream (not one deleted and made again).
func chainPieces(dirs []string) ([]*piece, error) {
	var chain []*piece
	for i, dir := range dirs {
		p, err := openPiece(dir)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			if p.man.AfterSeq != 0 {
				return nil, damaged(dir, "an increment (messages after seq %d), not a full backup: name the full backup first", p.man.AfterSeq)
			}
		} else {
			prev := chain[i-1]
			switch {
			case p.man.AfterSeq == 0:
				return nil, damaged(dir, "a full backup, not an increment of %s", prev.dir)
			case p.man.Stream != prev.man.Stream || !p.man.Created.Equal(prev.man.Created):
				return nil, damaged(dir, "an increment of another stream (%s created %s), not of %s's (%s created %s)",
					p.man.Stream, p.man.Created.Format(time.RFC3339Nano), prev.dir, prev.man.Stream, prev.man.Created.Format(time.RFC3339Nano))
			case p.man.AfterSeq != prev.man.LastSeq:
				return nil, damaged(dir, "a gap: it holds the messages after seq %d, but %s ends at seq %d", p.man.AfterSeq, prev.dir, prev.man.LastSeq)
			}
		}
		chain = append(chain, p)
	}
	return chain, nil
}

// writeFileSynced writes b to path through a temporary file, synced and
// renamed, so the path holds all of b or nothing.
func writeFileSynced(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
