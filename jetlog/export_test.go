package jetlog

// The methods below are for jetlog's own tests: nothing outside the
// package calls them, so they are not part of its surface.

// DurableSeq returns the highest seq known to be fsynced.
func (l *Log) DurableSeq() uint64 { return l.durable.Load() }

// Expire removes the messages older than MaxAge now and returns how many,
// as the background expiry does.
func (l *Log) Expire() (uint64, error) {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opExpire
	if err := l.send(r); err != nil {
		return 0, err
	}
	return r.n, r.err
}

// LastMsgID returns the Nats-Msg-Id of the newest message the stream
// stored ("" if it had none): the id Expect.LastMsgID is checked
// against. A delete or limit removing that message does not change it.
// After Open and after a purge it is read again from the message at
// State().LastSeq, so it is empty if that message is gone (the reference
// server does the same). It waits for the appender.
func (l *Log) LastMsgID() (string, error) {
	r := l.getReq()
	defer l.putReq(r)
	r.op = opLastMsgID
	if err := l.send(r); err != nil {
		return "", err
	}
	return r.id, r.err
}
