package jetlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
)

// catalogFile holds the catalog summary a clean Close writes: one entry
// per segment and per subject. With the clean marker it lets Open skip
// reading the indexes of sealed segments, so a clean restart costs
// O(segments + subjects), not O(messages); a sealed segment's section is
// loaded from its index on first use. Part of the disk format (doc.go).
const catalogFile = "catalog.snap" // crc32c + msgpack(catalogSnapshot), trusted only with cleanFile

const catalogVersion = 2

// catalogSnapshot is what catalog.snap holds.
type catalogSnapshot struct {
	Version  int               `msgpack:"v"`
	Last     uint64            `msgpack:"last"`
	LastTS   int64             `msgpack:"last_ts"`
	FirstTS  int64             `msgpack:"first_ts"` // of the first live message
	TailOff  int64             `msgpack:"tail_off"` // a record boundary near the end of the active segment
	Msgs     uint64            `msgpack:"msgs"`
	Bytes    uint64            `msgpack:"bytes"`
	Segments []sectionSummary  `msgpack:"segments"`
	Subjects subjectsSummaries `msgpack:"subjects"`
}

// sectionSummary describes one segment and its section.
type sectionSummary struct {
	ID      uint64     `msgpack:"id"`
	Size    int64      `msgpack:"size"` // segment file size the summary describes
	First   uint64     `msgpack:"first"`
	Slots   uint64     `msgpack:"slots"`
	Live    int        `msgpack:"live"`
	LastTS  int64      `msgpack:"last_ts"`
	Deleted []SeqRange `msgpack:"deleted"` // slots that are not live, ascending
	// Live messages per subject, by ascending subject id.
	SubjectIDs    []uint64 `msgpack:"subject_ids"`
	SubjectCounts []uint32 `msgpack:"subject_counts"`
}

// subjectsSummaries lists the subjects as parallel columns, which encode
// and decode faster than a struct per subject.
type subjectsSummaries struct {
	IDs    []uint64 `msgpack:"ids"`
	Names  []string `msgpack:"names"`
	Counts []uint64 `msgpack:"counts"`
	Firsts []uint64 `msgpack:"firsts"`
	Lasts  []uint64 `msgpack:"lasts"`
}

// snapshot summarises the catalog. The appender calls it at Close with
// Log.mu held, so no reader is loading a section.
func (c *catalog) snapshot() catalogSnapshot {
	s := catalogSnapshot{Version: catalogVersion, Last: c.last, LastTS: c.lastTS, FirstTS: c.baseTS, Msgs: c.msgs, Bytes: c.bytes}
	for i, seg := range c.segs {
		seg.loadMu.Lock() // a prefetch may be loading it
		if i == len(c.segs)-1 {
			s.TailOff = seg.tailOffset()
		}
		ids, counts := seg.subjectSummary()
		s.Segments = append(s.Segments, sectionSummary{
			ID: seg.id, Size: seg.size, First: seg.first, Slots: seg.slots(),
			Live: seg.live, LastTS: seg.lastTS, Deleted: seg.deletedRanges(),
			SubjectIDs: ids, SubjectCounts: counts,
		})
		seg.loadMu.Unlock()
	}
	n := len(c.subjects)
	ss := &s.Subjects
	ss.IDs, ss.Names = make([]uint64, 0, n), make([]string, 0, n)
	ss.Counts, ss.Firsts, ss.Lasts = make([]uint64, 0, n), make([]uint64, 0, n), make([]uint64, 0, n)
	for name, st := range c.subjects {
		ss.IDs = append(ss.IDs, st.id)
		ss.Names = append(ss.Names, name)
		ss.Counts = append(ss.Counts, st.count)
		ss.Firsts = append(ss.Firsts, st.first)
		ss.Lasts = append(ss.Lasts, st.last)
	}
	return s
}

// encodedSize bounds the snapshot's msgpack size from above (each number
// at its widest), so Close encodes it into one buffer (writeCheckedSized).
func (s *catalogSnapshot) encodedSize() int {
	const num = 9 // the widest msgpack integer
	size := 512
	for i := range s.Segments {
		seg := &s.Segments[i]
		size += 128 + len(seg.Deleted)*(2*num+16) + len(seg.SubjectIDs)*num + len(seg.SubjectCounts)*5
	}
	size += len(s.Subjects.IDs) * 4 * num
	for _, name := range s.Subjects.Names {
		size += len(name) + 5
	}
	return size
}

// consistent checks the snapshot against itself and the segment files
// found (ids ascending, idxs the ids with an index file).
func (s *catalogSnapshot) consistent(ids []uint64, idxs map[uint64]bool) error {
	if s.Version != catalogVersion {
		return fmt.Errorf("version %d", s.Version)
	}
	if len(s.Segments) != len(ids) {
		return fmt.Errorf("%d segments listed, %d found", len(s.Segments), len(ids))
	}
	ss := &s.Subjects
	n := len(ss.Names)
	if len(ss.IDs) != n || len(ss.Counts) != n || len(ss.Firsts) != n || len(ss.Lasts) != n {
		return errors.New("subject columns differ in length")
	}
	perSubject, err := newSubjectSums(ss.IDs)
	if err != nil {
		return err
	}
	var live uint64
	next := uint64(0)
	for i, sec := range s.Segments {
		if sec.ID != ids[i] || !idxs[sec.ID] {
			return fmt.Errorf("segment %d not found with its index", sec.ID)
		}
		// Every slot but a lost one has a record in the segment.
		if sec.First < next || sec.Live < 0 || uint64(sec.Live) > sec.Slots || sec.Size < 0 || sec.Slots > uint64(sec.Size)/recordFixed {
			return fmt.Errorf("segment %d: bad range", sec.ID)
		}
		deleted := uint64(0)
		from := sec.First
		for _, r := range sec.Deleted {
			if r.First < from || r.Last < r.First || r.Last >= sec.First+sec.Slots {
				return fmt.Errorf("segment %d: bad deleted range", sec.ID)
			}
			deleted += r.Last - r.First + 1
			from = r.Last + 1
		}
		if deleted+uint64(sec.Live) != sec.Slots {
			return fmt.Errorf("segment %d: live count does not add up", sec.ID)
		}
		if len(sec.SubjectIDs) != len(sec.SubjectCounts) || !slices.IsSorted(sec.SubjectIDs) {
			return fmt.Errorf("segment %d: bad subject counts", sec.ID)
		}
		var bySubject uint64
		for k, id := range sec.SubjectIDs {
			if !perSubject.add(id, uint64(sec.SubjectCounts[k])) {
				return fmt.Errorf("segment %d: unknown subject id %d", sec.ID, id)
			}
			bySubject += uint64(sec.SubjectCounts[k])
		}
		if bySubject != uint64(sec.Live) {
			return fmt.Errorf("segment %d: subject counts do not add up", sec.ID)
		}
		live += uint64(sec.Live)
		next = sec.First + sec.Slots
	}
	var counted uint64
	for i := range n {
		if ss.Counts[i] == 0 || ss.Firsts[i] > ss.Lasts[i] || ss.Lasts[i] > s.Last || perSubject.sum(ss.IDs[i]) != ss.Counts[i] {
			return fmt.Errorf("subject %q: bad summary", ss.Names[i])
		}
		counted += ss.Counts[i]
	}
	if live != s.Msgs || counted != s.Msgs || next > s.Last+1 {
		return errors.New("totals do not add up")
	}
	return nil
}

// restoreCatalog builds the catalog from catalog.snap after a clean
// shutdown, leaving every section unloaded; it reads only the active
// segment's index (to resume it) and verifies that segment's tail. It reports false, with nothing opened, when
// the snapshot is missing, damaged or does not match the files; Open then
// replays the indexes instead. The snapshot is removed either way: only
// the next clean Close makes a new one trustworthy.
func (l *Log) restoreCatalog(ids []uint64, idxs map[uint64]bool) (bool, error) {
	name := path.Join(l.dir, catalogFile)
	var snap catalogSnapshot
	err := readChecked(l.fs, l.seal, name, &snap)
	if rerr := l.fs.Remove(name); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return false, fmt.Errorf("jetlog: remove %s: %w", catalogFile, rerr)
	}
	if err == nil {
		err = snap.consistent(ids, idxs)
	}
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s unusable (%v): catalog rebuilt from the indexes", catalogFile, err))
		}
		return false, nil
	}
	segs := make([]*segment, 0, len(ids))
	fail := func() {
		for _, s := range segs {
			_ = s.release() // nothing was written
		}
	}
	for _, sec := range snap.Segments {
		f, err := l.openSegmentFile(segName(sec.ID))
		if err != nil {
			fail()
			return false, fmt.Errorf("jetlog: open segment %s: %w", segName(sec.ID), err)
		}
		seg := newSegment(sec.ID, f, sec.Size)
		segs = append(segs, seg)
		st, err := f.Stat()
		if err != nil {
			fail()
			return false, fmt.Errorf("jetlog: stat segment %s: %w", seg.name, err)
		}
		if st.Size() != sec.Size {
			fail()
			l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s: %s changed size since the clean shutdown: catalog rebuilt from the indexes", catalogFile, seg.name))
			return false, nil
		}
		seg.first, seg.nslots, seg.live, seg.lastTS, seg.deleted = sec.First, sec.Slots, sec.Live, sec.LastTS, sec.Deleted
		seg.subjIDs, seg.subjCounts = sec.SubjectIDs, sec.SubjectCounts
		seg.bySubj = nil
		seg.loaded.Store(false)
	}
	// The active segment: its index must describe it whole (resuming the
	// index builder) and its tail must hold whole records; its section
	// loads on first use like the others (before its first append).
	active := segs[len(segs)-1]
	data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(active.id)))
	size, count, ok := checkIndex(data)
	ok = ok && err == nil && size == active.size && snap.TailOff >= 0 && snap.TailOff <= size
	if ok {
		active.tailOff, ok = recordsFrom(l.seal, active.f, snap.TailOff, size)
	}
	if !ok {
		fail()
		l.report.Problems = append(l.report.Problems, fmt.Sprintf("%s: the active segment does not match its index: catalog rebuilt from the indexes", catalogFile))
		return false, nil
	}
	for _, seg := range segs {
		seg.indexed = seg.size
		seg.sealed.Store(seg != active)
	}

	c := &l.cat
	c.segs = segs
	c.last, c.lastTS, c.msgs, c.bytes = snap.Last, snap.LastTS, snap.Msgs, snap.Bytes
	c.base, c.baseTS = c.last+1, snap.FirstTS
	for _, sec := range snap.Segments {
		if sec.Live > 0 {
			c.base = sec.First
			if len(sec.Deleted) > 0 && sec.Deleted[0].First == sec.First {
				c.base = sec.Deleted[0].Last + 1
			}
			break
		}
	}
	ss := &snap.Subjects
	c.subjects = make(map[string]*subjectState, len(ss.Names))
	c.subjectSet.Add(1)
	c.nextID = 0
	for i, name := range ss.Names {
		c.subjects[name] = &subjectState{name: name, id: ss.IDs[i], count: ss.Counts[i], first: ss.Firsts[i], last: ss.Lasts[i]}
		c.nextID = max(c.nextID, ss.IDs[i]+1)
	}
	l.ap.idx.resume(data, count)
	l.report.CatalogRestored = true
	return true, nil
}

// segmentEntries visits the records of a segment for a lazy load: from
// its index, or by reading the segment when the index is unusable (and
// then rewriting the index). Problems are logged; the load compares what
// it finds with the summary.
func (l *Log) segmentEntries(seg *segment, visit func(e *entry)) {
	data, err := readSealed(l.fs, l.seal, segPath(l.dir, idxName(seg.id)))
	if err == nil {
		// The index must describe the segment as it was summarised; walk
		// it once to validate, so a damaged one is not half used.
		size, count, ok := checkIndex(data)
		if ok && size == seg.indexed && walkEntries(data, size, count, func(*entry) {}) {
			walkEntries(data, size, count, visit)
			return
		}
	}
	l.opts.Logger.Warn("jetlog: index unusable, reading the segment", "dir", l.dir, "segment", seg.name)
	data = make([]byte, seg.indexed) // the active one may have grown since, by tombstones only
	if n, err := seg.f.ReadAt(data, 0); n != len(data) {
		l.opts.Logger.Error("jetlog: read segment", "dir", l.dir, "segment", seg.name, "err", err)
		return
	}
	sc := scanSegment(l.seal, seg.name, data, 0)
	for _, ce := range sc.corrupt {
		l.opts.Logger.Error("jetlog: corrupt record", "dir", l.dir, "segment", ce.Segment, "offset", ce.Offset, "reason", ce.Reason)
	}
	if sc.tornAt >= 0 {
		l.opts.Logger.Error("jetlog: damaged tail of a sealed segment", "dir", l.dir, "segment", seg.name, "offset", sc.tornAt)
	}
	if seg.sealed.Load() { // the appender rewrites the active one's
		if err := l.rebuildIndex(seg, sc.entries, seg.indexed); err != nil {
			l.opts.Logger.Warn("jetlog: rebuild index", "dir", l.dir, "segment", seg.name, "err", err)
		} else {
			l.opts.Logger.Warn("jetlog: index rebuilt from its segment", "dir", l.dir, "segment", seg.name)
		}
	}
	for i := range sc.entries {
		visit(&sc.entries[i])
	}
}
