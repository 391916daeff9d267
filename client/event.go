package client

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"reflect"
	"time"

	"github.com/nats-io/nats.go"
)

// Envelope headers. The event attributes follow the CloudEvents binary
// content mode naming (ce-*), so consumers in other languages can read
// them without this package. Part of the wire format: never rename.
const (
	HeaderContentType = "Content-Type"
	HeaderSpecVersion = "ce-specversion" // always "1.0"
	HeaderID          = "ce-id"
	HeaderType        = "ce-type"
	HeaderSource      = "ce-source"
	HeaderTime        = "ce-time" // RFC 3339 with nanoseconds, UTC
	// HeaderMsgID is JetStream's de-duplication header; set to the event
	// id, so a stream stores a retried publish once within its duplicate
	// window.
	HeaderMsgID = "Nats-Msg-Id"
)

// Event is a typed message with its envelope. On publish, empty fields
// are filled in (a new ID, the type name of T, the connection's Source,
// the current time, a traceparent continuing the context's trace). On
// receive every field is read from the message.
type Event[T any] struct {
	ID          string
	Type        string
	Source      string
	Time        time.Time
	TraceParent string
	// Subject the message was published to; set on receive.
	Subject string
	// Header holds every header as received, or extra headers to send.
	// A received Header belongs to the handler; do not keep it past the
	// call if the message may be retried.
	Header nats.Header
	Data   T
}

// newID returns a random 26-character id (128 bits, base32 lowercase),
// valid as a subject token and as a Nats-Msg-Id.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return idEncoding.EncodeToString(b[:])
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// typeName is the default event type: T's Go type, such as "shop.Order".
func typeName[T any]() string {
	return reflect.TypeFor[T]().String()
}

// encodeEvent fills in ev's empty envelope fields and builds the message.
func encodeEvent[T any](ctx context.Context, c *Conn, subject string, ev *Event[T], codec Codec) (*nats.Msg, error) {
	if ev.ID == "" {
		ev.ID = c.opts.NewID()
	}
	if ev.Type == "" {
		ev.Type = typeName[T]()
	}
	if ev.Source == "" {
		ev.Source = c.opts.Source
	}
	if ev.Time.IsZero() {
		ev.Time = c.opts.Now()
	}
	if ev.TraceParent == "" {
		ev.TraceParent = childTraceParent(TraceParent(ctx))
	}
	data, err := codec.Marshal(ev.Data)
	if err != nil {
		return nil, fmt.Errorf("client: publish to %q: %w", subject, err)
	}
	h := make(nats.Header, len(ev.Header)+8)
	for k, v := range ev.Header {
		h[k] = v
	}
	// One backing array for the eight values: one allocation, not eight.
	// see BenchmarkEncodeEvent
	vals := [...]string{
		codec.ContentType(), "1.0", ev.ID, ev.Type, ev.Source,
		ev.Time.UTC().Format(time.RFC3339Nano), ev.TraceParent, ev.ID,
	}
	all := vals[:]
	for i, k := range [...]string{
		HeaderContentType, HeaderSpecVersion, HeaderID, HeaderType, HeaderSource,
		HeaderTime, HeaderTraceParent, HeaderMsgID,
	} {
		h[k] = all[i : i+1 : i+1]
	}
	ev.Header = h
	ev.Subject = subject
	return &nats.Msg{Subject: subject, Header: h, Data: data}, nil
}

// decodeEvent reads an event from a received message. A message without
// envelope headers (from a plain NATS publisher) decodes with the
// fallback codec and an empty envelope, except that the id falls back to
// Nats-Msg-Id.
func decodeEvent[T any](subject string, h nats.Header, data []byte, fallback Codec) (Event[T], error) {
	ev := Event[T]{Subject: subject, Header: h}
	codec, err := codecFor(h.Get(HeaderContentType), fallback)
	if err != nil {
		return ev, err
	}
	if len(data) > 0 {
		if err := codec.Unmarshal(data, &ev.Data); err != nil {
			return ev, fmt.Errorf("client: message on %q: %w", subject, err)
		}
	}
	ev.ID = h.Get(HeaderID)
	if ev.ID == "" {
		ev.ID = h.Get(HeaderMsgID)
	}
	ev.Type = h.Get(HeaderType)
	ev.Source = h.Get(HeaderSource)
	ev.TraceParent = h.Get(HeaderTraceParent)
	if t := h.Get(HeaderTime); t != "" {
		ev.Time, _ = time.Parse(time.RFC3339Nano, t) // a bad time reads as zero
	}
	return ev, nil
}
