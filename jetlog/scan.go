package jetlog

// scanResult is what a record-by-record read of a segment found.
type scanResult struct {
	entries []entry
	corrupt []*CorruptError
	tornAt  int64 // offset where the trailing damage starts, or -1
}

// scanSegment reads every record of a segment. A bad record followed by a
// valid one is corruption: it is reported and the scan resynchronises on
// the next valid record. A bad record with nothing valid after it is a
// torn tail (tornAt). lastSeq is the highest seq seen before this segment.
// It never panics on damaged input.
//
// An atomic batch cut short (its last records, the one without batchFlag
// among them, lost to a crash in the write that held it all) is part of
// the torn tail: the records of it that did reach the disk are dropped
// with it, so the batch is recovered whole or not at all.
//
// s opens a sealed segment's records (nil: a plaintext one).
func scanSegment(s *sealer, name string, data []byte, lastSeq uint64) scanResult {
	res := scanResult{tornAt: -1}
	pos := 0
	seen := lastSeq > 0
	run, runAt := -1, 0 // the open batch run: its first entry and offset
	finish := func() scanResult {
		if run >= 0 && len(res.corrupt) == 0 {
			res.entries, res.tornAt = res.entries[:run], int64(runAt)
		}
		return res
	}
	for pos < len(data) {
		r, n, reason := recordAt(s, data, pos, lastSeq, seen)
		if reason == "" {
			switch {
			case r.more && run < 0:
				run, runAt = len(res.entries), pos
			case !r.more:
				run = -1
			}
			res.entries = append(res.entries, entry{
				kind: r.kind, seq: r.seq, ts: r.ts, off: int64(pos), size: uint32(n),
				subject: r.subject, tomb: tombOf(r),
			})
			lastSeq = max(lastSeq, r.seq)
			seen = true
			pos += n
			continue
		}
		if reason == reasonAuth { // whole and in place, but not what was written
			res.corrupt = append(res.corrupt, &CorruptError{Segment: name, Offset: int64(pos), Reason: reason})
			n, _ := frameLen(data[pos:])
			pos += frameSize + n
			continue
		}
		next := resync(s, data, pos+1, lastSeq, seen)
		if next < 0 {
			res.tornAt = int64(pos)
			return finish()
		}
		res.corrupt = append(res.corrupt, &CorruptError{Segment: name, Offset: int64(pos), Reason: reason})
		pos = next
	}
	return finish()
}

func tombOf(r record) []byte {
	if r.kind == kindDelete {
		return r.payload
	}
	return nil
}

// recordAt decodes the record at pos and checks that its seq follows
// lastSeq. It returns the record, its size, or why it is not valid.
func recordAt(s *sealer, data []byte, pos int, lastSeq uint64, seen bool) (record, int, string) {
	rest := data[pos:]
	if len(rest) < recordFixed {
		return record{}, 0, "short record"
	}
	n, ok := frameLen(rest)
	if !ok {
		return record{}, 0, "implausible length"
	}
	if frameSize+n > len(rest) {
		return record{}, 0, "length beyond segment"
	}
	r, reason := s.decode(rest[:frameSize+n])
	if reason != "" {
		return record{}, 0, reason
	}
	if r.kind != kindMsg && r.kind != kindDelete {
		return record{}, 0, "unknown record kind"
	}
	if seen {
		if r.kind == kindMsg && r.seq <= lastSeq || r.kind == kindDelete && r.seq < lastSeq {
			return record{}, 0, "sequence out of order"
		}
	}
	if r.kind == kindDelete {
		if _, ok := decodeTombstone(r.payload, func(uint64) {}); !ok {
			return record{}, 0, "malformed tombstone"
		}
	}
	return r, frameSize + n, ""
}

// resync returns the offset of the first valid record at or after from, or
// -1. In a sealed segment a valid record is one whose frame and crc hold:
// it is opened (in place, so once) when the scan decodes it.
func resync(s *sealer, data []byte, from int, lastSeq uint64, seen bool) int {
	for p := from; p+recordFixed <= len(data); p++ {
		if s != nil {
			if n, ok := frameLen(data[p:]); ok && p+frameSize+n <= len(data) && s.frame(data[p:p+frameSize+n]) == "" {
				return p
			}
			continue
		}
		if _, _, reason := recordAt(nil, data, p, lastSeq, seen); reason == "" {
			return p
		}
	}
	return -1
}
