package jetlog

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// The files of a consumer: a snapshot (state.snap, generation G) and the
// journal of changes since it (journal.G). Compaction writes snapshot G+1,
// starts journal.G+1 and removes journal.G; a crash in between leaves a
// journal that the next open removes.

// load reads the snapshot and replays the journal that follows it.
func (c *Consumer) load() error {
	var snap consumerSnapshot
	err := readChecked(c.fs, c.seal, path.Join(c.dir, snapFile), &snap)
	var ce *CorruptError
	switch {
	case err == nil:
		c.state.Delivered, c.state.AckFloor = snap.Delivered, snap.AckFloor
		for _, p := range snap.Pending {
			c.state.Pending[p.Stream] = &p
		}
		if len(snap.GivenUp) > 0 {
			c.state.GivenUp = snap.GivenUp
		}
	case errors.As(err, &ce):
		// Keep what the newest journal says (see below).
		ce.Segment = path.Join(consumersDir, path.Base(c.dir), ce.Segment)
		c.recovered = append(c.recovered, ce)
		snap.Gen = c.newestJournal()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	c.gen = snap.Gen
	jname := path.Join(c.dir, journalName(c.gen))
	f, err := c.fs.OpenFile(jname, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// From here on through the cache's handle: the cache may close the
	// descriptor it adopted whenever another file needs its place.
	c.journal = c.cached(jname, f)
	st, err := c.journal.Stat()
	if err != nil {
		return err
	}
	data := make([]byte, st.Size())
	if n, err := c.journal.ReadAt(data, 0); n != len(data) {
		return fmt.Errorf("read journal: %w", err)
	}
	good := c.replayJournal(data)
	if ce != nil {
		// Without the snapshot nothing says which earlier messages were
		// acked: deliver the stream again from the start (at least once,
		// never skipping one). The consumer seq keeps counting up.
		c.state.Delivered.Stream = 0
		c.state.AckFloor = SeqPair{}
	}
	if good < int64(len(data)) {
		if err := c.journal.Truncate(good); err != nil {
			return err
		}
	}
	c.size = good
	// Older journals are already in the snapshot.
	names, err := c.fs.ReadDir(c.dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if g, ok := strings.CutPrefix(n, journalPrefix); ok {
			if gen, err := strconv.ParseUint(g, 10, 64); err == nil && gen < c.gen {
				_ = c.fs.Remove(path.Join(c.dir, n)) // leftover of a compaction
			}
		}
	}
	return c.fs.SyncDir(c.dir)
}

// replayJournal applies every intact record and returns the length of the
// intact prefix (a torn tail after it is cut off). A damaged record
// followed by valid ones is reported and skipped.
func (c *Consumer) replayJournal(data []byte) int64 {
	pos := 0
	end := 0
	var ops []consumerOp
	for pos < len(data) {
		var n int
		var ok bool
		// Asked first: a sealed record that fails to open is cleared in
		// place, and its frame could not be checked after.
		whole := c.seal != nil && journalFrameAt(c.seal, data, pos)
		ops, n, ok = journalRecordAt(c.seal, ops[:0], data, pos)
		if ok {
			for _, op := range ops {
				c.state.replay(op)
			}
			pos += n
			end = pos
			continue
		}
		if whole {
			// Whole, but it does not open (journalRecordAt failed): damage
			// in place, not a torn tail, so what follows it stays.
			c.recovered = append(c.recovered, &CorruptError{Segment: path.Join(consumersDir, path.Base(c.dir), journalName(c.gen)), Offset: int64(pos), Reason: "damaged journal record"})
			n, _ := frameLen(data[pos:])
			pos += frameSize + n
			end = pos
			continue
		}
		next := -1
		for p := pos + 1; p+recordFixed <= len(data); p++ {
			if journalFrameAt(c.seal, data, p) {
				next = p
				break
			}
		}
		if next < 0 {
			break
		}
		c.recovered = append(c.recovered, &CorruptError{Segment: path.Join(consumersDir, path.Base(c.dir), journalName(c.gen)), Offset: int64(pos), Reason: "damaged journal record"})
		pos = next
	}
	return int64(end)
}

// journalRecordAt decodes the journal record at pos, appending the
// changes it stands for to ops (a run record stands for many), and
// returns its length; false for a torn, damaged or foreign record.
func journalRecordAt(s *sealer, ops []consumerOp, data []byte, pos int) ([]consumerOp, int, bool) {
	rest := data[pos:]
	if len(rest) < recordFixed {
		return ops, 0, false
	}
	n, ok := frameLen(rest)
	if !ok || frameSize+n > len(rest) {
		return ops, 0, false
	}
	r, reason := s.decode(rest[:frameSize+n])
	if reason != "" {
		return ops, 0, false
	}
	ops, ok = decodeOps(ops, r)
	return ops, frameSize + n, ok
}

// journalFrameAt says whether a journal record may start at pos, for
// resynchronising after damage: a plain record that decodes, or a sealed
// one whose frame and crc hold (opening it is left to journalRecordAt,
// since it opens in place, once).
func journalFrameAt(s *sealer, data []byte, pos int) bool {
	if s == nil {
		_, _, ok := journalRecordAt(nil, nil, data, pos)
		return ok
	}
	if pos < 0 || len(data)-pos < recordFixed {
		return false
	}
	n, ok := frameLen(data[pos:])
	return ok && pos+frameSize+n <= len(data) && s.frame(data[pos:pos+frameSize+n]) == ""
}

// newestJournal returns the highest journal generation present.
func (c *Consumer) newestJournal() uint64 {
	names, _ := c.fs.ReadDir(c.dir) // no journal found means generation 0
	var newest uint64
	for _, n := range names {
		if g, ok := strings.CutPrefix(n, journalPrefix); ok {
			if gen, err := strconv.ParseUint(g, 10, 64); err == nil {
				newest = max(newest, gen)
			}
		}
	}
	return newest
}

func journalName(gen uint64) string { return journalPrefix + strconv.FormatUint(gen, 10) }

// compact writes snap as the next generation and starts its empty
// journal; c.ioMu is held.
func (c *Consumer) compact(snap *consumerSnapshot) error {
	slices.SortFunc(snap.Pending, func(a, b Pending) int { return cmp.Compare(a.Stream, b.Stream) })
	snap.Gen = c.gen + 1
	if err := writeChecked(c.fs, c.seal, path.Join(c.dir, snapFile), snap); err != nil {
		return fmt.Errorf("consumer snapshot: %w", err)
	}
	jname := path.Join(c.dir, journalName(snap.Gen))
	f, err := c.fs.Create(jname)
	if err != nil {
		return fmt.Errorf("consumer journal: %w", err)
	}
	f = c.cached(jname, f)
	if err := c.fs.SyncDir(c.dir); err != nil {
		_ = f.Close() // the sync error is the one that matters
		return fmt.Errorf("consumer dir sync: %w", err)
	}
	old, oldName := c.journal, path.Join(c.dir, journalName(c.gen))
	c.journal, c.size, c.gen, c.unsynced = f, 0, snap.Gen, false
	_ = old.Close()          // its contents are in the snapshot
	_ = c.fs.Remove(oldName) // if this fails, the next open removes it
	return nil
}

// cached hands a journal file just opened to the log's file cache, if
// any, so that idle consumers hold no descriptor.
func (c *Consumer) cached(name string, f vfs.File) vfs.File {
	if c.files == nil {
		return f
	}
	return c.files.adopt(c.fs, name, f, c.durability == DurabilityNone)
}
