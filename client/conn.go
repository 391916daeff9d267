package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultTimeout bounds requests and JetStream API calls whose context
// has no deadline.
const DefaultTimeout = 5 * time.Second

// Options configures a Conn. The zero value works: msgpack, a 5 s
// timeout, random ids, the wall clock and no logging.
type Options struct {
	// Codec encodes published payloads; received ones are decoded by the
	// codec their Content-Type names. Default MsgPack.
	Codec Codec
	// Source is the ce-source of published events. Default "bus-client".
	Source string
	// Timeout bounds a request or API call whose context has no
	// deadline. Default DefaultTimeout.
	Timeout time.Duration
	// Logger reports what handlers cannot return: undecodable messages
	// on core subscriptions, failed acks. Default discards.
	Logger *slog.Logger
	// Now is the clock for event times. Default time.Now.
	Now func() time.Time
	// NewID makes event ids. Default 128 random bits, base32.
	NewID func() string
}

func (o Options) withDefaults() Options {
	if o.Codec == nil {
		o.Codec = MsgPack{}
	}
	if o.Source == "" {
		o.Source = "bus-client"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.NewID == nil {
		o.NewID = newID
	}
	return o
}

// Conn wraps a nats.go connection with a codec and the JetStream context
// the typed functions use. It is safe for concurrent use. Closing the
// nats.Conn is the caller's business.
type Conn struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	opts Options

	mu     sync.Mutex  // guards server
	server *ServerInfo // nil until Server has asked once
}

// New wraps nc. It does no I/O.
func New(nc *nats.Conn, opts Options) (*Conn, error) {
	if nc == nil {
		return nil, fmt.Errorf("client: new: nil nats.Conn: %w", ErrBadConfig)
	}
	opts = opts.withDefaults()
	js, err := jetstream.New(nc, jetstream.WithDefaultTimeout(opts.Timeout))
	if err != nil {
		return nil, fmt.Errorf("client: new: %w", err)
	}
	return &Conn{nc: nc, js: js, opts: opts}, nil
}

// NATS is the wrapped connection.
func (c *Conn) NATS() *nats.Conn { return c.nc }

// JetStream is the JetStream context the package uses, for everything it
// does not wrap.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// Extension names a bus server advertises on InfoSubject.
const (
	ExtDeadLetterSubject = "dead_letter_subject" // x_bus_dead_letter_subject
	ExtBackOffJitter     = "backoff_jitter"      // x_bus_backoff_jitter
	ExtNakBackOff        = "nak_backoff"         // x_bus_nak_backoff
	ExtGroupBy           = "group_by"            // x_bus_group_by
	ExtLagAlert          = "lag_alert"           // x_bus_lag_alert
	ExtRedrive           = "dlq_redrive"         // $BUS.API.DLQ.REDRIVE (Conn.Redrive)
)

// InfoSubject is where a bus server answers with a ServerInfo. nats-server
// has no responder there.
const InfoSubject = "$BUS.INFO"

// ServerInfo is what the connected server says about its extensions.
type ServerInfo struct {
	Server     string   `json:"server"` // "bus", or "" for any other server
	Version    string   `json:"version"`
	JetStream  bool     `json:"jetstream"`
	Extensions []string `json:"extensions"`
}

// IsBus reports whether the server is bus.
func (i ServerInfo) IsBus() bool { return i.Server == "bus" }

// Has reports whether the server advertises the named extension.
func (i ServerInfo) Has(ext string) bool { return slices.Contains(i.Extensions, ext) }

// Server asks the server which extensions it has, once per Conn: the
// answer is cached, on the assumption that a reconnect reaches the same
// kind of server. Any server other than bus answers "no responders" and
// yields a zero ServerInfo with a nil error.
func (c *Conn) Server(ctx context.Context) (ServerInfo, error) {
	c.mu.Lock()
	cached := c.server
	c.mu.Unlock()
	if cached != nil {
		return *cached, nil
	}
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	var info ServerInfo
	msg, err := c.nc.RequestWithContext(ctx, InfoSubject, nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
	case err != nil:
		return ServerInfo{}, fmt.Errorf("client: ask %s: %w", InfoSubject, err)
	default:
		if err := json.Unmarshal(msg.Data, &info); err != nil {
			return ServerInfo{}, fmt.Errorf("client: read %s reply %q: %w", InfoSubject, msg.Data, err)
		}
	}
	c.mu.Lock()
	c.server = &info
	c.mu.Unlock()
	return info, nil
}

// withTimeout applies the default timeout to a context without a
// deadline.
func (c *Conn) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}
