package jetlog

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// VerifyReport is what a check of one stream found: by Log.Verify on an
// open log, or offline (bus store verify) by Open's recovery on a
// read-only view followed by a Verify (AddRecovery joins the two). Its
// text (Write) is the same either way, and so is its JSON (the answer of
// $BUS.API.STORE.VERIFY, docs/api.md). A zero report is a sound, empty
// stream. Not safe for concurrent use.
type VerifyReport struct {
	Stream string `json:"stream"`
	// Dir is where the stream is stored; offline only (a server does not
	// tell its clients its paths).
	Dir string `json:"-"`
	// OpenError says why the stream could not be opened (offline); then
	// nothing else was checked.
	OpenError string `json:"open_error,omitempty"`

	Messages  uint64          `json:"messages"`
	FirstSeq  uint64          `json:"first_seq"`
	LastSeq   uint64          `json:"last_seq"`
	Consumers []ConsumerCheck `json:"consumers"`

	// Losses are the messages whose records are damaged or missing, each
	// seq exactly, and whether they had been acknowledged.
	Losses []Loss `json:"lost,omitempty"`
	// Corrupt are the damaged records (file and offset) and files.
	Corrupt        []*CorruptError `json:"damaged_records,omitempty"`
	TornSegment    string          `json:"torn_segment,omitempty"`
	TruncatedBytes int64           `json:"torn_bytes,omitempty"`
	// DamagedIndexes are index files that are damaged, missing or do not
	// match their segment; a start rebuilds each from its segment.
	DamagedIndexes []string `json:"damaged_indexes,omitempty"`
	// Problems are other findings, each a sentence (a damaged seq.mark).
	Problems []string `json:"problems,omitempty"`

	Segments int           `json:"segments_checked"`
	Records  uint64        `json:"records_checked"`
	Bytes    uint64        `json:"bytes_checked"`
	Duration time.Duration `json:"duration"` // nanoseconds in JSON
}

// ConsumerCheck is what the check of one consumer's files found.
type ConsumerCheck struct {
	Name    string          `json:"name"`
	Corrupt []*CorruptError `json:"damaged,omitempty"` // file names relative to the stream's directory
	Error   string          `json:"error,omitempty"`   // it could not be opened or read
}

// Damaged reports whether anything is wrong.
func (r *VerifyReport) Damaged() bool {
	if r.OpenError != "" || len(r.Losses) > 0 || len(r.Corrupt) > 0 || r.TruncatedBytes > 0 ||
		len(r.DamagedIndexes) > 0 || len(r.Problems) > 0 {
		return true
	}
	for _, c := range r.Consumers {
		if c.Error != "" || len(c.Corrupt) > 0 {
			return true
		}
	}
	return false
}

// Write prints the verdict, one line for a sound stream, else a line per
// finding, and reports whether the stream is damaged.
func (r *VerifyReport) Write(w io.Writer) bool {
	if !r.Damaged() {
		fmt.Fprintf(w, "%s: ok, %d messages, seqs %d..%d, %d consumers\n", r.Stream, r.Messages, r.FirstSeq, r.LastSeq, len(r.Consumers))
		return false
	}
	if r.Dir != "" {
		fmt.Fprintf(w, "%s: DAMAGED (%s)\n", r.Stream, r.Dir)
	} else {
		fmt.Fprintf(w, "%s: DAMAGED\n", r.Stream)
	}
	if r.OpenError != "" {
		fmt.Fprintf(w, "  cannot be opened: %s\n", r.OpenError)
	}
	for _, x := range r.Losses {
		fmt.Fprintf(w, "  lost seqs %s (%s): %s in %s\n", seqList(x.First, x.Last), x.Acked, x.Reason, x.Segment)
	}
	for _, c := range r.Corrupt {
		fmt.Fprintf(w, "  damaged record: %s at offset %d: %s\n", c.Segment, c.Offset, c.Reason)
	}
	if r.TruncatedBytes > 0 {
		fmt.Fprintf(w, "  torn tail: %d bytes at the end of %s\n", r.TruncatedBytes, r.TornSegment)
	}
	for _, idx := range r.DamagedIndexes {
		fmt.Fprintf(w, "  index %s is damaged or missing (a start rebuilds it from its segment)\n", idx)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
	for _, c := range r.Consumers {
		if c.Error != "" {
			fmt.Fprintf(w, "  consumer %s cannot be opened: %s\n", c.Name, c.Error)
		}
		for _, ce := range c.Corrupt {
			fmt.Fprintf(w, "  consumer %s journal damaged: %s at offset %d: %s (rebuilt from what is intact: acked messages may be delivered again)\n",
				c.Name, ce.Segment, ce.Offset, ce.Reason)
		}
	}
	return true
}

// seqList writes a loss's seqs: each one when there are few, else the
// first and last of the unbroken range (every seq in it is affected).
func seqList(first, last uint64) string {
	if last-first < 16 {
		var b strings.Builder
		for s := first; s <= last; s++ {
			if s > first {
				b.WriteString(", ")
			}
			fmt.Fprint(&b, s)
		}
		return b.String()
	}
	return fmt.Sprintf("%d through %d, every one (%d seqs)", first, last, last-first+1)
}

// AddRecovery adds what Open's recovery found (offline, where the store
// was opened just for the check) to a Verify's findings, each finding
// once: recovery reports damage it skipped or repaired in memory, which a
// Verify after it may see again or no longer see.
func (r *VerifyReport) AddRecovery(rec RecoveryReport) {
	for _, x := range rec.Losses {
		if !slices.ContainsFunc(r.Losses, func(y Loss) bool { return y.SeqRange == x.SeqRange }) {
			r.Losses = append(r.Losses, x)
		}
	}
	slices.SortFunc(r.Losses, func(a, b Loss) int { return cmp.Compare(a.First, b.First) })
	r.Corrupt = addCorrupt(r.Corrupt, rec.Corrupt)
	if rec.TruncatedBytes > 0 {
		r.TornSegment, r.TruncatedBytes = rec.TornSegment, rec.TruncatedBytes
	}
	for _, idx := range rec.RebuiltIndexes {
		if !slices.Contains(r.DamagedIndexes, idx) {
			r.DamagedIndexes = append(r.DamagedIndexes, idx)
		}
	}
	slices.Sort(r.DamagedIndexes)
	r.Problems = append(slices.Clone(rec.Problems), r.Problems...)
}

// AddConsumerDamage adds damage found when a consumer was opened (offline)
// to its check, each once.
func (c *ConsumerCheck) AddConsumerDamage(found []*CorruptError) {
	c.Corrupt = addCorrupt(c.Corrupt, found)
}

func addCorrupt(to, found []*CorruptError) []*CorruptError {
	for _, ce := range found {
		if !slices.ContainsFunc(to, func(x *CorruptError) bool { return x.Segment == ce.Segment && x.Offset == ce.Offset }) {
			to = append(to, ce)
		}
	}
	slices.SortFunc(to, func(a, b *CorruptError) int {
		if a.Segment != b.Segment {
			return strings.Compare(a.Segment, b.Segment)
		}
		return cmp.Compare(a.Offset, b.Offset)
	})
	return to
}
