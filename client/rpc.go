package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
)

// Error headers of a failed reply. They are the NATS services (micro)
// convention, so clients of other languages read them too.
const (
	HeaderServiceError     = "Nats-Service-Error"
	HeaderServiceErrorCode = "Nats-Service-Error-Code"
)

// RemoteError is a handler's error as the requester receives it. A
// handler may return one to choose the code; any other error is sent
// with code "500".
type RemoteError struct {
	Code    string
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("client: remote error %s: %s", e.Code, e.Message)
}

// Request sends req on subject and waits for the typed response, until
// ctx ends (or the connection's Timeout, when ctx has no deadline). A
// handler's error comes back as a *RemoteError; nobody listening is
// nats.ErrNoResponders.
func Request[Req, Resp any](ctx context.Context, c *Conn, subject string, req Req, opts ...CallOption) (Resp, error) {
	var zero Resp
	cfg := c.callConfig(opts)
	ev := newEvent(cfg, req)
	msg, err := encodeEvent(ctx, c, subject, &ev, cfg.codec)
	if err != nil {
		return zero, err
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	reply, err := c.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		return zero, fmt.Errorf("client: request %q: %w", subject, err)
	}
	if text := reply.Header.Get(HeaderServiceError); text != "" {
		return zero, &RemoteError{Code: reply.Header.Get(HeaderServiceErrorCode), Message: text}
	}
	resp, err := decodeEvent[Resp](reply.Subject, reply.Header, reply.Data, cfg.codec)
	if err != nil {
		return zero, err
	}
	return resp.Data, nil
}

// Handle answers requests on subject with h, one at a time on the
// subscription's goroutine (run several, with WithQueue, to scale). The
// response is encoded with the call's codec, continuing the request's
// trace. A request that does not decode gets a "400" RemoteError.
func Handle[Req, Resp any](c *Conn, subject string, h func(ctx context.Context, ev Event[Req]) (Resp, error), opts ...CallOption) (*nats.Subscription, error) {
	cfg := c.callConfig(opts)
	cb := func(m *nats.Msg) {
		if m.Reply == "" {
			return // a publish, not a request: nobody to answer
		}
		ev, err := decodeEvent[Req](m.Subject, m.Header, m.Data, cfg.codec)
		if err != nil {
			c.respondError(m, &RemoteError{Code: "400", Message: err.Error()})
			return
		}
		ctx := ContextWithTraceParent(context.Background(), ev.TraceParent)
		resp, err := h(ctx, ev)
		if err != nil {
			c.respondError(m, err)
			return
		}
		out := Event[Resp]{Data: resp}
		reply, err := encodeEvent(ctx, c, m.Reply, &out, cfg.codec)
		if err != nil {
			c.respondError(m, err)
			return
		}
		if err := m.RespondMsg(reply); err != nil {
			c.opts.Logger.Warn("client: reply not sent", "subject", subject, "err", err)
		}
	}
	sub, err := c.nc.QueueSubscribe(subject, cfg.queue, cb)
	if err != nil {
		return nil, fmt.Errorf("client: handle %q: %w", subject, err)
	}
	return sub, nil
}

func (c *Conn) respondError(m *nats.Msg, err error) {
	code, text := "500", err.Error()
	var re *RemoteError
	if errors.As(err, &re) {
		code, text = re.Code, re.Message
	}
	reply := nats.NewMsg(m.Reply)
	reply.Header.Set(HeaderServiceError, text)
	reply.Header.Set(HeaderServiceErrorCode, code)
	if err := m.RespondMsg(reply); err != nil {
		c.opts.Logger.Warn("client: error reply not sent", "subject", m.Subject, "err", err)
	}
}
