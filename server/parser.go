package server

import "bytes"

// opKind names a client protocol operation.
type opKind uint8

const (
	opPing opKind = iota + 1
	opPong
	opConnect
	opPub // PUB and HPUB; op.hdr is -1 for PUB
	opSub
	opUnsub
	// The leaf-node protocol a hub speaks to bus (leafparser.go).
	opInfo      // INFO; op.json is the object
	opErr       // -ERR; op.text is the message, quotes included
	opLeafSub   // LS+ subject [queue weight]
	opLeafUnsub // LS- subject [queue]
	opLeafMsg   // LMSG and HMSG; op.queues lists queue groups
)

// op is one parsed client operation. Its byte slices alias the parser's
// input or its scratch buffers: they are valid only until the handler
// returns, so a handler that keeps one must copy it.
type op struct {
	kind    opKind
	subject []byte // PUB, HPUB, SUB
	reply   []byte // PUB, HPUB; nil when absent
	queue   []byte // SUB; nil when absent
	sid     []byte // SUB, UNSUB
	max     int    // UNSUB: auto-unsubscribe count, -1 when absent
	hdr     int    // HPUB: header block length; -1 for PUB
	size    int    // PUB, HPUB: declared length of msg
	msg     []byte // PUB, HPUB: header block followed by payload
	json    []byte // CONNECT, INFO
	text    []byte // -ERR
	queues  []byte // LMSG, HMSG: queue group names separated by blanks
	weight  int    // LS+: the queue group's member count
}

// opHandler acts on each parsed op; an error it returns stops the parse and
// is handed back to the caller of parse.
type opHandler interface {
	handleOp(o *op) error
}

// opName is one entry of the client op table. Op names are matched case
// insensitively, byte by byte, so garbage is rejected as soon as it arrives
// rather than after a whole line (the reference does the same).
type opName struct {
	name string
	kind opKind
	next parseState // state after the full name
}

var clientOps = [...]opName{
	{"PUB", opPub, stateNeedSpace},
	{"HPUB", opPub, stateNeedSpace},
	{"SUB", opSub, stateNeedSpace},
	{"UNSUB", opUnsub, stateNeedSpace},
	{"PING", opPing, stateSkipLine},
	{"PONG", opPong, stateSkipLine},
	{"CONNECT", opConnect, stateArgSpace},
	{"INFO", 0, stateArgSpace},  // clients may echo INFO; ignored
	{"+OK", 0, stateSkipLine},   // ignored
	{"-ERR", 0, stateNeedSpace}, // a client's -ERR closes the connection
}

type parseState uint8

const (
	stateOpName    parseState = iota // reading the op name
	stateNeedSpace                   // the op name must be followed by a space or tab
	stateArgSpace                    // skipping blanks before the arguments
	stateArg                         // reading arguments up to '\n'
	stateSkipLine                    // ignoring everything up to '\n'
	statePayload                     // reading a PUB/HPUB payload and its CRLF
)

// parser is a resumable state machine for the client side of the NATS text
// protocol: feed it the bytes of each read in order, however they are
// split, and it calls the handler once per complete op. It performs no I/O
// and, once its scratch buffers have grown, allocates nothing.
// see BenchmarkParsePub
type parser struct {
	maxControlLine int
	maxPayload     int
	ops            []opName // clientOps, or leafOps on a leaf link

	state   parseState
	name    [8]byte // op name so far, upper-cased
	nameLen int
	entry   *opName // the op being read once its name is complete

	argBuf   []byte // arguments that began in an earlier read
	argSplit bool   // argBuf holds the start of the current arguments
	msgBuf   []byte // payload that began in an earlier read
	need     int    // bytes of payload plus CRLF still expected
	op       op

	// connectFirst refuses any op but CONNECT at its first byte, as the
	// reference does while a connection has yet to authenticate. Its
	// owner sets and clears it between ops.
	connectFirst bool
}

// maxKeptPayloadBuffer is the largest buffer for payloads that span reads
// a parser keeps between messages: big enough that a stream of 64 KiB
// messages reuses it, small enough that rare huge ones do not pin memory.
const maxKeptPayloadBuffer = 256 * 1024

func newParser(maxControlLine, maxPayload int) *parser {
	return &parser{maxControlLine: maxControlLine, maxPayload: maxPayload, ops: clientOps[:]}
}

// parse consumes buf completely. It returns the first protocol error or
// handler error; after an error the parser must not be used again.
func (p *parser) parse(buf []byte, h opHandler) error {
	argStart := 0
	for i := 0; i < len(buf); i++ {
		b := buf[i]
		switch p.state {
		case stateOpName:
			if p.connectFirst && p.nameLen == 0 && b|0x20 != 'c' {
				return errAuthViolation
			}
			if p.nameLen == 0 && &p.ops[0] == &clientOps[0] && isPubPrefix(buf[i:]) {
				// Fast path for the op that dominates traffic.
				p.entry, p.state = &clientOps[0], stateArgSpace
				i += 3
				continue
			}
			if err := p.nextNameByte(b); err != nil {
				return err
			}
		case stateNeedSpace:
			if b != ' ' && b != '\t' {
				return errUnknownOp
			}
			p.state = stateArgSpace
		case stateArgSpace:
			if b == ' ' || b == '\t' {
				continue
			}
			p.state, argStart = stateArg, i
			i-- // the byte is the first of the arguments
		case stateArg:
			nl := bytes.IndexByte(buf[i:], '\n')
			if nl < 0 {
				p.argBuf = append(p.argBuf, buf[argStart:]...)
				p.argSplit = true
				// The line's own '\r' may be here already, its '\n' in
				// the next read: it does not count, as on a whole line.
				if n := len(p.argBuf); n > p.maxControlLine && (n > p.maxControlLine+1 || p.argBuf[n-1] != '\r') {
					return errMaxControlLine
				}
				return nil
			}
			end := i + nl
			arg := buf[argStart:end]
			if p.argSplit {
				p.argBuf = append(p.argBuf, arg...)
				arg = p.argBuf
			}
			if n := len(arg); n > 0 && arg[n-1] == '\r' {
				arg = arg[:n-1]
			}
			if len(arg) > p.maxControlLine {
				return errMaxControlLine
			}
			next, err := p.dispatchArgs(arg, buf[end+1:], h)
			if err != nil {
				return err
			}
			i = end + next // the loop's i++ steps past the consumed bytes
		case stateSkipLine:
			nl := bytes.IndexByte(buf[i:], '\n')
			if nl < 0 {
				return nil
			}
			i += nl
			kind := p.entry.kind
			p.reset()
			if kind != 0 {
				p.op = op{kind: kind}
				if err := h.handleOp(&p.op); err != nil {
					return err
				}
			}
		case statePayload:
			take := min(p.need, len(buf)-i)
			p.msgBuf = append(p.msgBuf, buf[i:i+take]...)
			p.need -= take
			i += take - 1
			if p.need == 0 {
				if err := p.finishPayload(p.msgBuf, h); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isPubPrefix reports whether b starts with "PUB" and a blank, in any case.
func isPubPrefix(b []byte) bool {
	return len(b) >= 4 && b[0]|0x20 == 'p' && b[1]|0x20 == 'u' && b[2]|0x20 == 'b' && (b[3] == ' ' || b[3] == '\t')
}

// nextNameByte advances the op-name state by one byte.
func (p *parser) nextNameByte(b byte) error {
	if 'a' <= b && b <= 'z' {
		b -= 'a' - 'A'
	}
	if p.nameLen == len(p.name) {
		return errUnknownOp
	}
	p.name[p.nameLen] = b
	p.nameLen++
	name := p.name[:p.nameLen]
	for k := range p.ops {
		e := &p.ops[k]
		if len(e.name) < len(name) || e.name[:len(name)] != string(name) {
			continue
		}
		if len(e.name) == len(name) {
			p.entry, p.state = e, e.next
		}
		return nil
	}
	return errUnknownOp
}

// dispatchArgs handles a complete argument line. rest is the input after
// the line; it returns how many of its bytes were consumed.
func (p *parser) dispatchArgs(arg, rest []byte, h opHandler) (int, error) {
	e := p.entry
	switch {
	case e.name == "-ERR" && e.kind == 0:
		return 0, errMalformed
	case e.kind == 0: // INFO
		p.reset()
		return 0, nil
	case e.kind == opConnect || e.kind == opInfo:
		p.op = op{kind: e.kind, json: arg}
	case e.kind == opErr:
		p.op = op{kind: opErr, text: arg}
	case e.kind == opLeafSub:
		if err := p.op.parseLeafSub(arg); err != nil {
			return 0, err
		}
	case e.kind == opLeafUnsub:
		if err := p.op.parseLeafUnsub(arg); err != nil {
			return 0, err
		}
	case e.kind == opSub:
		if err := p.op.parseSub(arg); err != nil {
			return 0, err
		}
	case e.kind == opUnsub:
		if err := p.op.parseUnsub(arg); err != nil {
			return 0, err
		}
	default:
		return p.startPayload(arg, rest, h)
	}
	p.reset()
	return 0, h.handleOp(&p.op)
}

// startPayload parses PUB/HPUB arguments and delivers the message at once
// when the whole payload is already in rest, which is the common case.
func (p *parser) startPayload(arg, rest []byte, h opHandler) (int, error) {
	hasHeaders := p.entry.name[0] == 'H' // HPUB, HMSG
	kind := p.entry.kind
	if err := p.op.parseMsgArgs(kind, arg, hasHeaders); err != nil {
		return 0, err
	}
	size := p.op.size
	if size > p.maxPayload {
		return 0, errMaxPayload
	}
	if len(rest) >= size+2 {
		return size + 2, p.finishPayload(rest[:size+2], h)
	}
	// The payload spans reads: keep the arguments, which may alias the
	// caller's read buffer, and gather the payload in msgBuf.
	if !p.argSplit {
		p.argBuf = append(p.argBuf[:0], arg...)
		_ = p.op.parseMsgArgs(kind, p.argBuf, hasHeaders)
	}
	if cap(p.msgBuf) < size+2 {
		p.msgBuf = make([]byte, 0, size+2)
	}
	p.msgBuf = append(p.msgBuf[:0], rest...)
	p.need = size + 2 - len(rest)
	p.state = statePayload
	return len(rest), nil
}

// finishPayload checks the CRLF after a payload and hands the op over.
func (p *parser) finishPayload(frame []byte, h opHandler) error {
	size := len(frame) - 2
	if frame[size] != '\r' || frame[size+1] != '\n' {
		return errUnknownOp
	}
	p.op.msg = frame[:size]
	p.reset()
	err := h.handleOp(&p.op)
	if cap(p.msgBuf) > maxKeptPayloadBuffer {
		p.msgBuf = nil // don't pin a large one-off payload buffer
	}
	return err
}

func (p *parser) reset() {
	p.state, p.nameLen, p.entry = stateOpName, 0, nil
	p.argBuf, p.argSplit = p.argBuf[:0], false
}
