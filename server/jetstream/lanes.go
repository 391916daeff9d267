package jetstream

import (
	"bytes"
	"strings"
)

// The API's lanes: how requests wait, and which goroutine serves each
// (see Service.changes).

// How API requests are queued: the lanes' lengths, how many goroutines
// serve reads, and how many bytes of requests may wait at all (beyond
// it a request is refused at once rather than held in memory).
const (
	apiLaneLen     = 1024
	apiReaders     = 2
	apiChangeLanes = 4
	maxQueuedBytes = 64 << 20
)

// captureRequest queues an API request. MSG.NEXT belongs to each pull
// consumer's own subscription: declining it here lets a pull for a missing
// consumer get the no-responders status, as with the reference.
func (svc *Service) captureRequest(from Rights, subject, reply []byte, hdr int, msg []byte) bool {
	if bytes.HasPrefix(subject, []byte(apiPrefix+"CONSUMER.MSG.NEXT.")) {
		return false
	}
	if name, ok := bytes.CutPrefix(subject, []byte(apiPrefix+"DIRECT.GET.")); ok && !svc.servesDirect(name) {
		return false // the reference has no responder then: the client gets no responders
	}
	size := int64(len(subject) + len(reply) + len(msg))
	if svc.queued.Add(size) > maxQueuedBytes {
		svc.queued.Add(-size)
		svc.replyTo(string(reply), "io.nats.jetstream.api.v1.error_response").send(nil, errInsufficientResources())
		return true
	}
	r := apiRequest{from: from, subject: string(subject), reply: string(reply), size: size}
	buf := append([]byte(nil), msg...)
	if hdr >= 0 {
		r.hdr, r.body = buf[:hdr:hdr], buf[hdr:]
	} else {
		r.body = buf
	}
	lane := svc.changes[changeLane(r.subject)]
	if isRead(r.subject) {
		lane = svc.reads
	}
	select {
	case lane <- r:
	case <-svc.stop:
		svc.queued.Add(-size)
	}
	return true
}

// isRead reports whether an API request only reads, so that it may run
// beside others.
func isRead(subject string) bool {
	op := strings.TrimPrefix(subject, apiPrefix)
	switch {
	case op == "INFO", op == "STREAM.LIST", op == "STREAM.NAMES":
		return true
	case strings.HasPrefix(op, "STREAM.INFO."), strings.HasPrefix(op, "STREAM.MSG.GET."), strings.HasPrefix(op, "DIRECT.GET."):
		return true
	case strings.HasPrefix(op, "CONSUMER.INFO."), strings.HasPrefix(op, "CONSUMER.LIST."), strings.HasPrefix(op, "CONSUMER.NAMES."):
		return true
	}
	return false
}

// changeLane returns the change lane of an API request: the one of the
// stream it names, so that changes to one stream (its creation, updates,
// purges, deletion, and its consumers') keep their order; requests that
// name no stream share lane 0.
func changeLane(subject string) int {
	name := changedStream(strings.TrimPrefix(subject, apiPrefix))
	if name == "" {
		return 0
	}
	h := uint32(2166136261) // FNV-1a, inline: no hasher to allocate per request
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return int(h % apiChangeLanes)
}

// changedStream returns the stream a change request names: STREAM.<op>.S,
// STREAM.MSG.DELETE.S, CONSUMER.<op>.S…, CONSUMER.DURABLE.CREATE.S… and
// the LEADER.STEPDOWN and PEER.REMOVE forms.
func changedStream(op string) string {
	t := strings.SplitN(op, ".", 5)
	switch {
	case len(t) >= 4 && (t[1] == "MSG" || t[1] == "LEADER" || t[1] == "PEER"):
		return t[3]
	case len(t) >= 5 && t[0] == "CONSUMER" && t[1] == "DURABLE":
		return t[3]
	case len(t) >= 3 && (t[0] == "STREAM" || t[0] == "CONSUMER"):
		return t[2]
	}
	return ""
}

// serve handles the requests of one lane until Shutdown.
func (svc *Service) serve(lane chan apiRequest) {
	defer svc.workers.Done()
	for {
		select {
		case r := <-lane:
			if r.run != nil {
				r.run()
				continue
			}
			done := svc.auditStart(r)
			svc.handle(r)
			done()
			svc.queued.Add(-r.size)
		case <-svc.stop:
			return
		}
	}
}
