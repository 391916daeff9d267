package ntf

import (
	"time"

	"github.com/synadia-io/orbit.go/ntf-client/api"
)

// CreateOption customizes CreateServer.
type CreateOption interface{ applyCreate(*createOptions) }

// UpdateOption customizes Instance.UpdateServer.
type UpdateOption interface{ applyUpdate(*updateOptions) }

type createOptions struct {
	snippets map[string]string
	tls      *api.TLSOptions
}

type updateOptions struct {
	snippets   map[string]string
	tlsTimeout *float64 // seconds; nil keeps the create-time timeout
}

// Snippet is a piece of server configuration for one of the slots of the
// rendered config (snippetKeys). It works for both create and update, as
// in the tester: an update re-renders the config from what it is given.
type Snippet struct {
	key  string
	body string
}

func (s Snippet) applyCreate(o *createOptions) { o.snippets = withSnippet(o.snippets, s) }
func (s Snippet) applyUpdate(o *updateOptions) { o.snippets = withSnippet(o.snippets, s) }

func withSnippet(m map[string]string, s Snippet) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[s.key] = s.body
	return m
}

type createOpt func(*createOptions)

func (f createOpt) applyCreate(o *createOptions) { f(o) }

type updateOpt func(*updateOptions)

func (f updateOpt) applyUpdate(o *updateOptions) { f(o) }

// WithAccounts replaces the default accounts (USERS1…USERS5 and $SYS).
func WithAccounts(body string) Snippet { return Snippet{"accounts", body} }

// WithSystemAccount replaces the default `system_account: "$SYS"` line.
func WithSystemAccount(body string) Snippet { return Snippet{"system_account", body} }

// WithAuthorization replaces the default `no_auth_user: user1` line.
func WithAuthorization(body string) Snippet { return Snippet{"authorization", body} }

// WithTLSSnippet adds a top-level tls block; it cannot go with
// WithGeneratedTLS.
func WithTLSSnippet(body string) Snippet { return Snippet{"tls", body} }

// WithWebSocket adds a websocket block; a free port is reserved for it
// as .Ports.websocket and reported in ManagedServer.Ports["websocket"].
func WithWebSocket(body string) Snippet { return Snippet{"websocket", body} }

// WithMQTT adds an mqtt block on a reserved port .Ports.mqtt.
func WithMQTT(body string) Snippet { return Snippet{"mqtt", body} }

// WithLeafNode adds a leafnodes block on a reserved port .Ports.leafnode.
func WithLeafNode(body string) Snippet { return Snippet{"leafnode", body} }

// WithJetStream adds keys inside the jetstream block (domain, limits);
// the instance must have JetStream.
func WithJetStream(body string) Snippet { return Snippet{"jetstream", body} }

// WithTopLevel adds lines at the top of the config.
func WithTopLevel(body string) Snippet { return Snippet{"top", body} }

// TLSOpt customizes WithGeneratedTLS.
type TLSOpt func(*api.TLSOptions)

// WithGeneratedTLS mints a CA, a server certificate and (for mutual TLS,
// the default) a client certificate, and serves TLS on the client port.
// Instance.TLS carries what a client needs.
func WithGeneratedTLS(opts ...TLSOpt) CreateOption {
	return createOpt(func(o *createOptions) {
		t := &api.TLSOptions{Mode: api.TLSModeMutual}
		for _, opt := range opts {
			opt(t)
		}
		o.tls = t
	})
}

// TLSMutual requires the issued client certificate (the default).
func TLSMutual() TLSOpt { return func(t *api.TLSOptions) { t.Mode = api.TLSModeMutual } }

// TLSServerOnly asks for no client certificate.
func TLSServerOnly() TLSOpt { return func(t *api.TLSOptions) { t.Mode = api.TLSModeServer } }

// TLSSANs replaces the server certificate's names (default localhost,
// 127.0.0.1, ::1).
func TLSSANs(sans ...string) TLSOpt {
	return func(t *api.TLSOptions) { t.SANs = append([]string(nil), sans...) }
}

// TLSHandshakeFirst has the server start TLS before its INFO.
func TLSHandshakeFirst() TLSOpt { return func(t *api.TLSOptions) { t.HandshakeFirst = true } }

// TLSTimeout sets the TLS handshake timeout; a non-positive d keeps 2 s.
func TLSTimeout(d time.Duration) TLSOpt {
	return func(t *api.TLSOptions) {
		if d > 0 {
			t.Timeout = d.Seconds()
		}
	}
}

// WithTLSTimeout sets the generated TLS's handshake timeout on update.
func WithTLSTimeout(d time.Duration) UpdateOption {
	return updateOpt(func(o *updateOptions) {
		if d > 0 {
			secs := d.Seconds()
			o.tlsTimeout = &secs
		}
	})
}
