package jetlog

// The byte count a stream shows (State.Bytes) and MaxBytes limits is not
// the size of its records on disk but the size nats-server gives a
// message, so that the same messages count the same on both servers (a
// client's max_bytes, `nats stream info`, object-store sizes): subject,
// header block and payload, plus 30 bytes of framing in a file stream
// and 16 in a memory stream. (nats-server adds 4 more for a message
// with headers in a file stream; a record does not say whether it had a
// header block without reading it, so bus does not: see docs/api.md.)
//
// The catalog keeps record bytes (what reads and the catalog snapshot
// need); the accounted count is derived from them and the message count,
// since a record's size is its body plus recordFixed.
const (
	fileFraming   = 30
	memoryFraming = 16
)

// overhead is what a record takes beyond the accounted size of its
// message.
func (l *Log) overhead() uint64 {
	if l.memory {
		return recordFixed - memoryFraming
	}
	return uint64(recordFixed+l.seal.overhead()) - fileFraming
}

// accounted is the accounted size of msgs messages whose records take
// recBytes.
func (l *Log) accounted(recBytes, msgs uint64) uint64 {
	return recBytes - msgs*l.overhead()
}
