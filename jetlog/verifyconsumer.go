package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// verify checks the consumer's files as they are now, for Log.Verify:
// consumer.meta and state.snap whole, and the journal up to what has
// been written to it, every record of which must be intact. It takes
// ioMu only to learn which journal is current and how long, and to open
// it (a compaction may remove it right after: the descriptor still reads
// it), so acks and deliveries wait for no read. It reports false for a
// consumer closed meanwhile.
func (c *Consumer) verify() (ConsumerCheck, bool) {
	name := path.Base(c.dir)
	chk := ConsumerCheck{Name: name}
	c.ioMu.Lock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		c.ioMu.Unlock()
		return chk, false
	}
	gen, size := c.gen, c.size
	jname := path.Join(c.dir, journalName(gen))
	f, err := c.fs.OpenFile(jname, os.O_RDONLY, 0)
	c.ioMu.Unlock()
	rel := func(file string) string { return path.Join(consumersDir, name, file) }
	if err != nil {
		chk.Error = fmt.Sprintf("open %s: %v", rel(journalName(gen)), err)
		return chk, true
	}
	defer f.Close() // only read

	for _, file := range []string{consumerMetaFile, snapFile} {
		var v any = &ConsumerConfig{}
		if file == snapFile {
			v = &consumerSnapshot{}
		}
		err := readChecked(c.fs, c.seal, path.Join(c.dir, file), v)
		var ce *CorruptError
		switch {
		case err == nil, file == snapFile && errors.Is(err, fs.ErrNotExist): // no compaction yet
		case errors.As(err, &ce):
			chk.Corrupt = append(chk.Corrupt, &CorruptError{Segment: rel(file), Offset: ce.Offset, Reason: ce.Reason})
		default:
			chk.Error = fmt.Sprintf("read %s: %v", rel(file), err)
		}
	}
	data := make([]byte, size) // at most about Options.CompactBytes: compaction starts a new one
	if n, err := f.ReadAt(data, 0); int64(n) != size {
		chk.Error = fmt.Sprintf("read %s: %d of %d bytes: %v", rel(journalName(gen)), n, size, err)
		return chk, true
	}
	for _, at := range damagedJournalRecords(c.seal, data) {
		chk.Corrupt = append(chk.Corrupt, &CorruptError{Segment: rel(journalName(gen)), Offset: at, Reason: "damaged journal record"})
	}
	return chk, true
}

// damagedJournalRecords returns the offsets of the damaged records of a
// journal's written bytes, all of which should be intact records (a torn
// tail included: what the consumer has written is whole).
func damagedJournalRecords(s *sealer, data []byte) []int64 {
	var bad []int64
	var ops []consumerOp
	for pos := 0; pos < len(data); {
		whole := s != nil && journalFrameAt(s, data, pos) // asked first: opening is in place
		var n int
		var ok bool
		if ops, n, ok = journalRecordAt(s, ops[:0], data, pos); ok {
			pos += n
			continue
		}
		bad = append(bad, int64(pos))
		if whole {
			n, _ := frameLen(data[pos:])
			pos += frameSize + n
			continue
		}
		next := -1
		for p := pos + 1; p+recordFixed <= len(data); p++ {
			if journalFrameAt(s, data, p) {
				next = p
				break
			}
		}
		if next < 0 {
			break
		}
		pos = next
	}
	return bad
}
