package client

import "github.com/nats-io/nats.go"

// CallOption adjusts one Publish, Subscribe, Request, Handle or Produce
// call. Options a call does not use are ignored.
type CallOption func(*callConfig)

type callConfig struct {
	codec  Codec
	id     string
	typ    string
	header nats.Header
	queue  string
}

func (c *Conn) callConfig(opts []CallOption) callConfig {
	cfg := callConfig{codec: c.opts.Codec}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithCodec encodes this call's payload with codec instead of the
// connection's.
func WithCodec(codec Codec) CallOption {
	return func(c *callConfig) {
		if codec != nil {
			c.codec = codec
		}
	}
}

// WithID sets the event id (and so the Nats-Msg-Id) instead of a random
// one: a business key such as an order id makes a republish of the same
// fact a duplicate the stream and idempotent handlers recognise.
func WithID(id string) CallOption { return func(c *callConfig) { c.id = id } }

// WithType sets the event type instead of T's Go type name.
func WithType(typ string) CallOption { return func(c *callConfig) { c.typ = typ } }

// WithHeader adds headers to the published message. Envelope headers
// (ce-*, Content-Type, traceparent, Nats-Msg-Id) are set by the package
// and win over these.
func WithHeader(h nats.Header) CallOption { return func(c *callConfig) { c.header = h } }

// WithQueue makes Subscribe or Handle join a queue group, so each message
// goes to one member.
func WithQueue(group string) CallOption { return func(c *callConfig) { c.queue = group } }

// newEvent builds the outgoing event of a call.
func newEvent[T any](cfg callConfig, data T) Event[T] {
	return Event[T]{ID: cfg.id, Type: cfg.typ, Header: cfg.header, Data: data}
}
