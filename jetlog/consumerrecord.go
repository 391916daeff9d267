package jetlog

import "encoding/binary"

// Run records: the changes of one step (a pull's deliveries, a batch of
// acks) mostly come as runs, which one record holds where one record a
// change took 31 to 35 bytes: a pull of 500 cost 17.5 KB of journal
// before, about 1.5 KB as a delivered run (see
// BenchmarkMachineFetchJournaled in server/jetstream). Part of the disk
// format (doc.go): never renumber. A run replays as the single changes
// it stands for, in order, so the state rebuilt is the same as from
// single records.
const (
	// kindDeliveredRun is deliveries with consecutive consumer seqs,
	// ascending stream seqs and one delivery count: seq = the first
	// stream seq, ts = its deadline, payload = uvarint consumer seq,
	// uvarint deliveries, then per further delivery uvarint stream seq
	// delta (>= 1) and varint deadline delta.
	kindDeliveredRun byte = 20
	// kindAckedRun is acks of ascending stream seqs, as ranges: seq =
	// the first range's start, payload = uvarint its length, then per
	// further range uvarint gap (>= 1, from the end of the one before,
	// exclusive, to its start) and uvarint length (>= 1).
	kindAckedRun byte = 21
)

// maxRunOps bounds the changes in one run record, so that a record stays
// small next to the journal and a run replays in bounded steps.
const maxRunOps = 4096

// appendOps encodes ops as journal records onto dst: a run of two or
// more deliveries or acks as one run record, anything else as a record
// of its own, sealed by s unless it is nil. scratch is payload space to
// reuse; both are returned.
// see BenchmarkConsumerJournalEncode
func appendOps(s *sealer, dst, scratch []byte, ops []consumerOp) ([]byte, []byte) {
	for i := 0; i < len(ops); {
		op := ops[i]
		j := i + 1
		switch op.kind {
		case kindDelivered:
			for j < len(ops) && j-i < maxRunOps && continuesDeliveries(ops[j-1], ops[j]) {
				j++
			}
		case kindAcked:
			for j < len(ops) && j-i < maxRunOps && ops[j].kind == kindAcked && ops[j].stream > ops[j-1].stream {
				j++
			}
		}
		p := scratch[:0]
		switch {
		case j-i == 1:
			p = binary.AppendUvarint(p, op.consumer)
			p = binary.AppendUvarint(p, op.deliveries)
			dst = s.appendRecord(dst, op.kind, op.stream, op.deadline, "", nil, p, 0)
		case op.kind == kindDelivered:
			p = binary.AppendUvarint(p, op.consumer)
			p = binary.AppendUvarint(p, op.deliveries)
			for k := i + 1; k < j; k++ {
				p = binary.AppendUvarint(p, ops[k].stream-ops[k-1].stream)
				p = binary.AppendVarint(p, ops[k].deadline-ops[k-1].deadline)
			}
			dst = s.appendRecord(dst, kindDeliveredRun, op.stream, op.deadline, "", nil, p, 0)
		default: // acks, as ranges of consecutive seqs
			start, n, end := op.stream, uint64(1), uint64(0)
			for k := i + 1; k <= j; k++ {
				if k < j && ops[k].stream == start+n {
					n++
					continue
				}
				if end != 0 { // not the first range: its gap from the one before
					p = binary.AppendUvarint(p, start-end)
				}
				p = binary.AppendUvarint(p, n)
				end = start + n
				if k < j {
					start, n = ops[k].stream, 1
				}
			}
			dst = s.appendRecord(dst, kindAckedRun, op.stream, 0, "", nil, p, 0)
		}
		scratch = p
		i = j
	}
	return dst, scratch
}

// continuesDeliveries reports whether delivery b can follow a in one
// delivered run.
func continuesDeliveries(a, b consumerOp) bool {
	return b.kind == kindDelivered && b.consumer == a.consumer+1 && b.deliveries == a.deliveries && b.stream > a.stream
}

// decodeOps appends the changes journal record r stands for to ops. It
// reports false for a record that is not a consumer change or whose
// payload does not parse (nothing is appended then).
func decodeOps(ops []consumerOp, r record) ([]consumerOp, bool) {
	start := len(ops)
	p := r.payload
	switch r.kind {
	case kindDelivered, kindAcked, kindAckedAll, kindDeadline, kindReset, kindGivenUp:
		op := consumerOp{kind: r.kind, stream: r.seq, deadline: r.ts}
		var k int
		if op.consumer, k = binary.Uvarint(p); k > 0 {
			op.deliveries, _ = binary.Uvarint(p[k:])
		}
		return append(ops, op), true
	case kindDeliveredRun:
		op := consumerOp{kind: kindDelivered, stream: r.seq, deadline: r.ts}
		var ok bool
		if op.consumer, p, ok = uvarint(p); !ok {
			return ops, false
		}
		if op.deliveries, p, ok = uvarint(p); !ok {
			return ops, false
		}
		ops = append(ops, op)
		for len(p) > 0 {
			d, rest, ok := uvarint(p)
			if !ok || d == 0 || op.stream+d < op.stream {
				return ops[:start], false
			}
			dl, k := binary.Varint(rest)
			if k <= 0 {
				return ops[:start], false
			}
			p = rest[k:]
			op.stream += d
			op.consumer++
			op.deadline += dl
			ops = append(ops, op)
		}
		return ops, true
	case kindAckedRun:
		seq := r.seq
		for first := true; first || len(p) > 0; first = false {
			if !first {
				gap, rest, ok := uvarint(p)
				if !ok || gap == 0 || seq+gap < seq {
					return ops[:start], false
				}
				seq, p = seq+gap, rest
			}
			n, rest, ok := uvarint(p)
			if !ok || n == 0 || n > maxRunOps || seq+n < seq {
				return ops[:start], false
			}
			p = rest
			for range n {
				ops = append(ops, consumerOp{kind: kindAcked, stream: seq})
				seq++
			}
		}
		return ops, true
	}
	return ops, false
}

// uvarint reads one uvarint off the front of p.
func uvarint(p []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(p)
	if k <= 0 {
		return 0, p, false
	}
	return v, p[k:], true
}
