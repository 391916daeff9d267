package server

import "bytes"

// The leaf-node protocol as a hub speaks it to bus on a link bus dialed
// (docs/scaling.md, shared spec LEAFNODE.md): the client protocol's PING,
// PONG and +OK, and INFO, -ERR, LS+, LS-, LMSG and HMSG. The parser is the
// client one with this table (newLeafParser); the argument layouts are
// below.
var leafOps = [...]opName{
	{"LMSG", opLeafMsg, stateNeedSpace},
	{"HMSG", opLeafMsg, stateNeedSpace},
	{"LS+", opLeafSub, stateNeedSpace},
	{"LS-", opLeafUnsub, stateNeedSpace},
	{"PING", opPing, stateSkipLine},
	{"PONG", opPong, stateSkipLine},
	{"INFO", opInfo, stateArgSpace},
	{"+OK", 0, stateSkipLine},
	{"-ERR", opErr, stateArgSpace},
}

// leafControlLine is the longest control line a leaf link takes, as the
// reference allows routes and leaf nodes (16 × 4096): a hub's INFO lists
// its cluster's URLs and can outgrow a client's limit.
const leafControlLine = 16 * 4096

func newLeafParser(maxPayload int) *parser {
	return &parser{maxControlLine: leafControlLine, maxPayload: maxPayload, ops: leafOps[:]}
}

// parseMsgArgs fills o from the arguments of a message op of kind.
func (o *op) parseMsgArgs(kind opKind, line []byte, hasHeaders bool) error {
	if kind == opLeafMsg {
		return o.parseLeafMsg(line, hasHeaders)
	}
	return o.parsePub(line, hasHeaders)
}

// parseLeafMsg fills o from the arguments of LMSG or HMSG:
//
//	subject [reply] [hdr] size
//	subject + reply queue... [hdr] size   (a reply, then queue groups)
//	subject | queue... [hdr] size         (queue groups, no reply)
//
// The queue groups are those of the receiver the message is for; it goes
// to the receiver's plain subscriptions in any case.
func (o *op) parseLeafMsg(line []byte, hasHeaders bool) error {
	*o = op{kind: opLeafMsg, hdr: -1}
	rest, size := lastField(line)
	if o.size = parseSize(size); o.size < 0 {
		return errMalformed
	}
	if hasHeaders {
		var hdr []byte
		rest, hdr = lastField(rest)
		if o.hdr = parseSize(hdr); o.hdr < 0 || o.hdr > o.size {
			return errMalformed
		}
	}
	o.subject, rest = nextField(rest)
	if len(o.subject) == 0 {
		return errMalformed
	}
	first, more := nextField(rest)
	switch {
	case len(first) == 0:
	case len(bytes.TrimLeft(more, " \t")) == 0:
		o.reply = first
	case len(first) == 1 && first[0] == '+':
		o.reply, more = nextField(more)
		o.queues = bytes.Trim(more, " \t")
	case len(first) == 1 && first[0] == '|':
		o.queues = bytes.Trim(more, " \t")
	default:
		return errMalformed
	}
	return nil
}

// nextField splits the first blank-separated field off b.
func nextField(b []byte) (field, rest []byte) {
	b = bytes.TrimLeft(b, " \t")
	i := bytes.IndexAny(b, " \t")
	if i < 0 {
		return b, nil
	}
	return b[:i], b[i:]
}

// lastField splits the last blank-separated field off b.
func lastField(b []byte) (rest, field []byte) {
	b = bytes.TrimRight(b, " \t")
	i := bytes.LastIndexAny(b, " \t")
	return b[:i+1], b[i+1:]
}

// eachQueue calls fn with each queue group name in an LMSG's list until
// fn returns false.
func eachQueue(queues []byte, fn func(name []byte) bool) {
	for len(queues) > 0 {
		var q []byte
		q, queues = nextField(queues)
		if len(q) > 0 && !fn(q) {
			return
		}
	}
}

// parseLeafSub fills o from "subject" or "subject queue weight". A
// missing or bad weight counts as one member, as in the reference.
func (o *op) parseLeafSub(line []byte) error {
	var f [maxArgs][]byte
	*o = op{kind: opLeafSub}
	switch splitArgs(line, &f) {
	case 1:
		o.subject = f[0]
	case 3:
		o.subject, o.queue = f[0], f[1]
		o.weight = max(parseSize(f[2]), 1)
	default:
		return errMalformed
	}
	return nil
}

// parseLeafUnsub fills o from "subject [queue]".
func (o *op) parseLeafUnsub(line []byte) error {
	var f [maxArgs][]byte
	*o = op{kind: opLeafUnsub}
	switch splitArgs(line, &f) {
	case 1:
		o.subject = f[0]
	case 2:
		o.subject, o.queue = f[0], f[1]
	default:
		return errMalformed
	}
	return nil
}
