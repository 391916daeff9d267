package server

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
)

// Protocol tracing (nats-server's trace, -V) logs every operation a
// connection sends and every frame it is sent, at LevelTrace, in the
// reference's words: "<<- [PUB orders 5]", "<<- MSG_PAYLOAD: [\"hello\"]",
// "->> [MSG orders 1 5]", "->> [PONG]", "->> [-ERR Unknown Protocol
// Operation]". Each record carries the connection's cid and remote
// address, as every connection log line does.
//
// Off, it costs one load and one branch where an op is handled and where
// a message is queued to a subscriber (see BenchmarkPublishFanout); the
// tracer is swapped by Reload.

// LevelTrace is the level of protocol trace records, below slog's Debug;
// a handler shows them only at this level or lower.
const LevelTrace = slog.Level(-8)

// tracer is what tracing is set to; nil (Server.tracer) is off.
// Immutable.
type tracer struct {
	headersOnly bool // trace_headers: a message's headers, not its payload
	maxMsgLen   int  // max_traced_msg_len: longer payloads are cut; 0: whole
}

// newTracer is the tracer o asks for, nil when tracing is off.
func newTracer(o Options) *tracer {
	if !o.Trace && !o.TraceVerbose {
		return nil
	}
	return &tracer{headersOnly: o.TraceHeaders, maxMsgLen: o.MaxTracedMsgLen}
}

// trace logs one trace record for c.
func (c *conn) trace(text string) {
	c.log.Log(context.Background(), LevelTrace, text)
}

// traceIn logs an op c sent, and a message's payload.
func (c *conn) traceIn(t *tracer, o *op) {
	name, arg := opTrace(o)
	if arg == "" {
		c.trace("<<- [" + name + "]")
	} else {
		c.trace("<<- [" + name + " " + arg + "]")
	}
	if o.kind == opPub || o.kind == opLeafMsg {
		c.traceMsg(t, "<<-", o.hdr, o.msg)
	}
}

// traceOut logs a frame queued to c: a protocol line (CRLF included) as
// the reference names it.
func (c *conn) traceOut(line string) {
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case line == "+OK":
		line = "OK"
	case strings.HasPrefix(line, "-ERR '"):
		line = "-ERR " + strings.TrimSuffix(strings.TrimPrefix(line, "-ERR '"), "'")
	}
	c.trace("->> [" + line + "]")
}

// traceDeliver logs a message queued to c for sub.
func (c *conn) traceDeliver(t *tracer, subject, sid, reply []byte, hdr int, msg []byte) {
	var b strings.Builder
	b.WriteString("->> [")
	if hdr >= 0 {
		b.WriteString("HMSG ")
	} else {
		b.WriteString("MSG ")
	}
	b.Write(subject)
	b.WriteByte(' ')
	b.Write(sid)
	if len(reply) > 0 {
		b.WriteByte(' ')
		b.Write(reply)
	}
	if hdr >= 0 {
		b.WriteString(" " + strconv.Itoa(hdr))
	}
	b.WriteString(" " + strconv.Itoa(len(msg)) + "]")
	c.trace(b.String())
	c.traceMsg(t, "->>", hdr, msg)
}

// traceLeafOut logs a message queued to a leaf link, as its LMSG (or
// HMSG) line reads.
func (c *conn) traceLeafOut(t *tracer, to, reply, queues []byte, hdr int, msg []byte) {
	parts := []string{"LMSG", string(to)}
	if hdr >= 0 {
		parts[0] = "HMSG"
	}
	if len(queues) > 0 {
		parts = append(parts, map[bool]string{true: "+", false: "|"}[len(reply) > 0])
	}
	if len(reply) > 0 {
		parts = append(parts, string(reply))
	}
	if len(queues) > 0 {
		parts = append(parts, string(queues))
	}
	if hdr >= 0 {
		parts = append(parts, strconv.Itoa(hdr))
	}
	c.trace("->> [" + strings.Join(append(parts, strconv.Itoa(len(msg))), " ") + "]")
	c.traceMsg(t, "->>", hdr, msg)
}

// traceMsg logs a message's payload (its headers with trace_headers),
// cut at max_traced_msg_len; an empty one is not logged, as by the
// reference.
func (c *conn) traceMsg(t *tracer, dir string, hdr int, msg []byte) {
	if t.headersOnly {
		if hdr < 0 || hdr > len(msg) {
			return
		}
		msg = msg[:max(hdr-4, 0)] // without the blank line that ends the block
	}
	if len(msg) == 0 {
		return
	}
	if t.maxMsgLen > 0 && len(msg) > t.maxMsgLen {
		q := strconv.Quote(string(msg[:t.maxMsgLen]))
		c.trace(dir + ` MSG_PAYLOAD: ["` + q[1:len(q)-1] + `..."]`)
		return
	}
	c.trace(dir + " MSG_PAYLOAD: [" + strconv.Quote(string(msg)) + "]")
}

// opTrace is an op's name and arguments as the client sent them
// (single blanks between), CONNECT's secrets redacted.
func opTrace(o *op) (name, arg string) {
	join := func(parts ...string) string {
		var kept []string
		for _, p := range parts {
			if p != "" {
				kept = append(kept, p)
			}
		}
		return strings.Join(kept, " ")
	}
	switch o.kind {
	case opPing:
		return "PING", ""
	case opPong:
		return "PONG", ""
	case opConnect:
		return "CONNECT", redactSecrets(string(o.json))
	case opInfo:
		return "INFO", string(o.json)
	case opErr:
		return "-ERR", string(o.text)
	case opPub:
		if o.hdr >= 0 {
			return "HPUB", join(string(o.subject), string(o.reply), strconv.Itoa(o.hdr), strconv.Itoa(o.size))
		}
		return "PUB", join(string(o.subject), string(o.reply), strconv.Itoa(o.size))
	case opSub:
		return "SUB", join(string(o.subject), string(o.queue), string(o.sid))
	case opUnsub:
		if o.max >= 0 {
			return "UNSUB", join(string(o.sid), strconv.Itoa(o.max))
		}
		return "UNSUB", string(o.sid)
	case opLeafSub:
		w := ""
		if len(o.queue) > 0 {
			w = strconv.Itoa(o.weight)
		}
		return "LS+", join(string(o.subject), string(o.queue), w)
	case opLeafUnsub:
		return "LS-", join(string(o.subject), string(o.queue))
	case opLeafMsg:
		name := "LMSG"
		size := strconv.Itoa(o.size)
		if o.hdr >= 0 {
			name, size = "HMSG", strconv.Itoa(o.hdr)+" "+size
		}
		return name, join(string(o.subject), string(o.reply), string(o.queues), size)
	}
	return fmt.Sprintf("op(%d)", o.kind), ""
}

// secretField finds the values of CONNECT's fields that must not reach a
// log: passwords, tokens, nkey signatures (the reference also hides the
// nkey).
var secretField = regexp.MustCompile(`("(?:pass|auth_token|sig|nkey|proxy_sig)"\s*:\s*")((?:[^"\\]|\\.)*)(")`)

func redactSecrets(connect string) string {
	return secretField.ReplaceAllString(connect, "${1}[REDACTED]${3}")
}
