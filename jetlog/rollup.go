package jetlog

// Rollup is what storing a message removes besides (Expect.Rollup): the
// Nats-Rollup of JetStream, done in the message's own commit. Its
// removals go into the commit's tombstone, written with the message in
// the same write and after it, and the message is marked as continued
// (batchFlag) up to that tombstone: a crash that cuts the write keeps
// the message and its removals together or neither (scanSegment drops a
// run the tombstone does not close), so a rollup is never half applied.
type Rollup uint8

const (
	RollupNone    Rollup = iota
	RollupSubject        // the older messages on the message's own subject
	RollupAll            // every older message of the stream
)

// rollupMark is the commit's removals before a request was staged: the
// request's messages carry batchFlag once it added some (rolledUp).
type rollupMark struct {
	deletes int
	floor   uint64
}

func (l *Log) rollupMark() rollupMark {
	return rollupMark{deletes: len(l.ap.deletes), floor: l.ap.rollFloor}
}

// rolledUp reports whether the request staged since m removes anything.
func (l *Log) rolledUp(m rollupMark) bool {
	return len(l.ap.deletes) > m.deletes || l.ap.rollFloor > m.floor
}

// stageRollup adds the removals of a message with rollup about to be
// staged at seq: the older messages the catalog holds and those staged
// earlier in this commit. It runs in the appender.
func (l *Log) stageRollup(kind Rollup, subject string, seq uint64) {
	ap := &l.ap
	switch kind {
	case RollupNone:
	case RollupAll:
		// Staged messages below seq are in the catalog when the floor is
		// applied (commit adds before it removes).
		ap.rollFloor = max(ap.rollFloor, seq)
	case RollupSubject:
		// Every one of them is older than seq. A seq listed twice (also
		// deleted explicitly) is harmless: removal is idempotent and the
		// tombstone lists each once (encodeTomb).
		if s, ok := l.cat.subjects[subject]; ok {
			ap.deletes = append(ap.deletes, l.cat.subjectSeqs(s)...)
		}
		for i := range ap.staged {
			if st := &ap.staged[i]; st.req.msgs[st.idx].Subject == subject {
				ap.deletes = append(ap.deletes, st.seq)
			}
		}
	}
}
