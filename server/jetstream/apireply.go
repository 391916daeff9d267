package jetstream

import "encoding/json"

// The API's one response path, in the manner of Prometheus's apiFunc: a
// handler returns what to answer, (response, nil) or (nil, error), and
// apiReply.send alone writes it, counts it and audits it. No handler
// writes its response itself; what else this package sends to a client
// is not a JSON API response: publish acks, direct gets (apidirect.go),
// snapshot chunks and restore chunk acks.

// apiReply is where one request's answer goes: its reply subject and the
// type its error response carries.
type apiReply struct {
	svc *Service
	to  string // the reply subject; "" sends nothing
	typ string // e.g. typeStreamCreate
}

func (svc *Service) replyTo(reply, typ string) apiReply {
	return apiReply{svc: svc, to: reply, typ: typ}
}

// send writes a handler's result: e, if not nil, as {"type","error"} of
// a.typ, counted in the account's API errors; else resp.
//
//   - A resp returned with an error is that error's response in the
//     request's own shape (STREAM.INFO's carries its paging fields).
//   - A resp that is a followedBy is sent, then its then runs: what must
//     come after the response (advisories, a snapshot's chunks).
//   - A resp that is a headedResponse is sent with its header block.
//   - Without a reply subject nothing is sent, but it is counted
//     and a follow-up still runs, as the request was carried out.
//   - (nil, nil) sends nothing and is not counted.
//
// The account's API total counts a response as it is sent, so an
// account info answer does not count itself (the reference's first
// $JS.API.INFO says total 0); an error counts in the total too.
func (a apiReply) send(resp any, e *apiError) {
	var then func()
	if f, ok := resp.(followedBy); ok {
		resp, then = f.resp, f.then
	}
	if resp != nil || e != nil {
		a.svc.apiTotal.Add(1)
	}
	if e != nil {
		a.svc.apiErrors.Add(1)
		if resp == nil {
			resp = apiResponse{Type: a.typ, Error: e}
		}
	}
	var hdr []byte
	if h, ok := resp.(headedResponse); ok {
		resp, hdr = h.resp, h.hdr
	}
	if resp != nil {
		a.svc.respond(a.to, hdr, resp)
	}
	if then != nil {
		then()
	}
}

// followedBy is a response with what to do once it is sent.
type followedBy struct {
	resp any
	then func()
}

// headedResponse is a response sent with a header block (a sourcing
// consumer's create names the stream's identity in one); it may be
// wrapped in a followedBy.
type headedResponse struct {
	resp any
	hdr  []byte
}

// respond marshals v to JSON and publishes it to reply, for the audit
// too; only send calls it.
func (svc *Service) respond(reply string, hdr []byte, v any) {
	if reply == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		svc.sh.log.Error("encode api response", "err", err)
		return
	}
	svc.sh.core.Publish(reply, "", hdr, b)
	svc.audit(reply, b)
}

// apiResponse is the envelope of every error response.
type apiResponse struct {
	Type  string    `json:"type"`
	Error *apiError `json:"error,omitempty"`
}

// lookup finds a stream for an API request: not found (10059), or
// offline when its files are there but could not be opened.
func (svc *Service) lookup(name string) (*stream, *apiError) {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if st := svc.streams[name]; st != nil {
		return st, nil
	}
	if d, ok := svc.damaged[name]; ok {
		return nil, errStreamOffline(d.Error)
	}
	return nil, errStreamNotFound()
}

// lookupConsumer finds a consumer for an API request, and its stream:
// the stream's errors as lookup's, then consumer not found (10014).
func (svc *Service) lookupConsumer(streamName, name string) (*stream, *consumer, *apiError) {
	st, e := svc.lookup(streamName)
	if e != nil {
		return nil, nil, e
	}
	c := st.consumer(name)
	if c == nil {
		return nil, nil, errConsumerNotFound()
	}
	return st, c, nil
}

// storageFailed logs a failed stream operation with everything (paths
// included) and returns the client's error, without the server's paths.
func (svc *Service) storageFailed(typ, stream string, err error) *apiError {
	svc.sh.log.Error("stream operation failed", "op", typ, "stream", stream, "err", err)
	return errStreamGeneric(err)
}
