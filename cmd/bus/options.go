package main

import (
	"log/slog"

	"github.com/bus-dev/bus/conf"
	"github.com/bus-dev/bus/server"
)

// options maps a validated configuration to server.Options. It is the only
// code that knows both, so a new key ends up here.
func options(cfg conf.Config, log *slog.Logger) server.Options {
	port := cfg.Port
	if port == -1 {
		port = 0 // nats-server's "random port"; server.Options spells it 0
	}
	return server.Options{
		Host:                  cfg.Host,
		Port:                  port,
		HTTPPort:              cfg.HTTPPort, // both use 0 for disabled, -1 for a free port
		ServerName:            cfg.ServerName,
		StoreDir:              cfg.StoreDir,
		JetStream:             cfg.JetStream.Enabled,
		JetStreamDomain:       cfg.JetStream.Domain,
		JetStreamMaxMemory:    cfg.JetStream.MaxMemory,
		JetStreamMaxStore:     cfg.JetStream.MaxStore,
		JetStreamSyncInterval: cfg.JetStream.SyncInterval,
		JetStreamIndexMemory:  cfg.JetStream.MaxIndexMemory,
		JetStreamLimits:       jetstreamLimits(cfg.JetStream.Limits),
		JetStreamBatchLimits:  jetstreamBatchLimits(cfg.JetStream.Limits.Batch),
		JetStreamEncryption:   server.JetStreamEncryption{Cipher: cfg.JetStream.Cipher, Key: cfg.JetStream.Key, PrevKey: cfg.JetStream.PrevKey},
		JetStreamAckFormatV2:  cfg.FeatureFlags.JSAckFormatV2,
		MaxPayload:            int(cfg.MaxPayload), // at most 64MB, checked by conf
		MaxControlLine:        int(cfg.MaxControlLine),
		MaxConnections:        cfg.MaxConnections,
		MaxSubscriptions:      cfg.MaxSubscriptions,
		MaxPending:            cfg.MaxPending,
		MaxPendingTotal:       cfg.MaxPendingTotal,
		PingInterval:          cfg.PingInterval,
		MaxPingsOut:           cfg.MaxPingsOut,
		WriteDeadline:         cfg.WriteDeadline,
		TLS:                   tlsOptions(cfg.TLS),
		HTTPSPort:             cfg.HTTPSPort,
		HTTPAuth:              cfg.HTTPAuth,
		Authorization:         authorization(cfg.Authorization, cfg.NoAuthUser),
		SystemAccount:         systemAccount(cfg),
		Accounts:              accounts(cfg),
		Operator:              operator(cfg),
		MaxUnauthenticated:    cfg.MaxUnauthenticated,
		Mappings:              mappings(cfg.Mappings),
		LeafNodes:             leafNodes(cfg.LeafNodes),
		WebSocket:             webSocket(cfg.WebSocket),
		MQTT:                  mqttOptions(cfg.MQTT),
		ClientAdvertise:       cfg.ClientAdvertise,
		NoHeaderSupport:       cfg.NoHeaderSupport,
		Trace:                 cfg.Trace,
		TraceVerbose:          cfg.TraceVerbose,
		TraceHeaders:          cfg.TraceHeaders,
		MaxTracedMsgLen:       cfg.MaxTracedMsgLen,
		LameDuckDuration:      cfg.LameDuckDuration,
		LameDuckGracePeriod:   cfg.LameDuckGracePeriod,
		Logger:                log,
	}
}

// mappings maps the mappings block (nil: none).
func mappings(m *conf.Mappings) []server.Mapping {
	if m == nil {
		return nil
	}
	out := make([]server.Mapping, len(m.Entries))
	for i, e := range m.Entries {
		out[i] = server.Mapping{Source: e.Source, Destinations: make([]server.MapDestination, len(e.Destinations))}
		for j, d := range e.Destinations {
			out[i].Destinations[j] = server.MapDestination{Subject: d.Subject, Weight: d.Weight, Cluster: d.Cluster}
		}
	}
	return out
}

// leafNodes maps the leafnodes block (nil: none); disabled remotes are
// left out, so they are never dialed.
func leafNodes(l *conf.LeafNodes) server.LeafNodeOptions {
	if l == nil {
		return server.LeafNodeOptions{}
	}
	out := server.LeafNodeOptions{ReconnectInterval: l.Reconnect}
	for _, r := range l.Remotes {
		if r.Disabled {
			continue
		}
		remote := server.LeafRemote{
			URLs: r.URLs, NoRandomize: r.NoRandomize, Credentials: r.Credentials, Nkey: r.Nkey,
			DenyImports: r.DenyImports, DenyExports: r.DenyExports, Account: r.Account,
			DialTimeout: r.DialTimeout, FirstInfoTimeout: r.FirstInfoTimeout,
			WebSocketCompression: r.WSCompression, WebSocketNoMasking: r.WSNoMasking,
		}
		if t := r.TLS; t != nil {
			remote.TLS = &server.LeafTLS{CAFile: t.CAFile, CertFile: t.CertFile, KeyFile: t.KeyFile, InsecureSkipVerify: t.Insecure, Timeout: t.Timeout}
		}
		out.Remotes = append(out.Remotes, remote)
	}
	return out
}

// authorization maps the authorization block (nil: none) and the
// top-level no_auth_user, which nats-server keeps outside the block.
func authorization(a *conf.Authorization, noAuthUser string) server.Authorization {
	if a == nil {
		return server.Authorization{NoAuthUser: noAuthUser}
	}
	out := server.Authorization{
		Token:                a.Token,
		User:                 a.User,
		Password:             a.Password,
		DefaultPermissions:   permissions(a.DefaultPermissions),
		NoAuthUser:           noAuthUser,
		Timeout:              a.Timeout,
		ReferenceStoredReads: a.ReferenceStoredReads,
		Callout:              authCallout(a.Callout),
	}
	if a.Users != nil {
		out.Users = users(a.Users)
	}
	return out
}

// authCallout maps auth_callout; nil when not set.
func authCallout(c *conf.AuthCallout) *server.AuthCallout {
	if c == nil {
		return nil
	}
	return &server.AuthCallout{
		Issuer: c.Issuer, Account: c.Account, AuthUsers: c.AuthUsers, XKey: c.XKey,
		AllowedAccounts: c.AllowedAccounts, BypassAuthenticated: c.BypassAuthenticated,
	}
}

// operator maps operator mode: the operators' JWTs, the system account's
// key, the account JWTs to start with and the NATS resolver, if any.
func operator(cfg conf.Config) *server.Operator {
	if !cfg.OperatorMode() {
		return nil
	}
	o := &server.Operator{SystemAccount: cfg.SystemAccount}
	if cfg.Operator != nil {
		o.JWTs = cfg.Operator.JWTs
	}
	if cfg.TrustedKeys != nil {
		o.TrustedKeys = cfg.TrustedKeys.Keys
	}
	if cfg.ResolverPreload != nil {
		o.Accounts = cfg.ResolverPreload.Accounts
	}
	if r := cfg.Resolver; r != nil && r.Type != conf.ResolverMemory {
		o.Resolver = &server.Resolver{Type: r.Type, Dir: r.Dir, AllowDelete: r.AllowDelete, HardDelete: r.HardDelete,
			Limit: r.Limit, TTL: r.TTL, Interval: r.Interval, Timeout: r.Timeout}
	}
	return o
}

// systemAccount maps the system account of the accounts block.
func systemAccount(cfg conf.Config) server.SystemAccount {
	name := cfg.SystemAccountName()
	a := cfg.Account(name)
	if a == nil {
		return server.SystemAccount{}
	}
	return server.SystemAccount{Name: name, Users: users(a.Users)}
}

// accounts maps the accounts block's other accounts.
func accounts(cfg conf.Config) []server.Account {
	if cfg.Accounts == nil {
		return nil
	}
	sys := cfg.SystemAccountName()
	var out []server.Account
	for _, a := range cfg.Accounts.Entries {
		if a.Name == sys {
			continue
		}
		out = append(out, server.Account{
			Name: a.Name, Users: users(a.Users), DefaultPermissions: permissions(a.DefaultPermissions),
			Mappings: mappings(a.Mappings),
			Limits: server.AccountLimits{
				MaxConnections: a.Limits.MaxConnections, MaxSubscriptions: a.Limits.MaxSubscriptions, MaxPayload: a.Limits.MaxPayload,
			},
			JetStream: accountJetStream(a.JetStream),
			Exports:   exports(a.Exports),
			Imports:   imports(a.Imports),
		})
	}
	return out
}

func exports(e conf.Exports) server.Exports {
	var out server.Exports
	for _, x := range e.Streams {
		out.Streams = append(out.Streams, server.StreamExport{Subject: x.Subject, Accounts: x.Accounts})
	}
	for _, x := range e.Services {
		se := server.ServiceExport{
			Subject: x.Subject, Accounts: x.Accounts, ResponseType: x.ResponseType, ResponseThreshold: x.ResponseThreshold,
		}
		if l := x.Latency; l != nil {
			se.Latency = &server.Latency{Sampling: l.Sampling, Subject: l.Subject}
		}
		out.Services = append(out.Services, se)
	}
	return out
}

func imports(i conf.Imports) server.Imports {
	var out server.Imports
	for _, x := range i.Streams {
		out.Streams = append(out.Streams, server.StreamImport{Account: x.Account, Subject: x.Subject, Prefix: x.Prefix, To: x.To})
	}
	for _, x := range i.Services {
		out.Services = append(out.Services, server.ServiceImport{Account: x.Account, Subject: x.Subject, To: x.To})
	}
	return out
}

func accountJetStream(js *conf.AccountJetStream) *server.AccountJetStream {
	if js == nil {
		return nil
	}
	return &server.AccountJetStream{
		MaxMemory: js.MaxMemory, MaxStore: js.MaxStore,
		MaxStreams: js.MaxStreams, MaxConsumers: js.MaxConsumers, MaxAckPending: js.MaxAckPending,
		MemoryMaxStreamBytes: js.MemoryMaxStreamBytes, StoreMaxStreamBytes: js.StoreMaxStreamBytes,
		MaxBytesRequired: js.MaxBytesRequired,
	}
}

func users(list []conf.User) []server.User {
	out := make([]server.User, len(list))
	for i, u := range list {
		out[i] = user(u)
	}
	return out
}

func user(u conf.User) server.User {
	return server.User{Name: u.Name, Password: u.Password, Nkey: u.Nkey, Permissions: permissions(u.Permissions),
		AllowedConnectionTypes: u.AllowedConnectionTypes}
}

func permissions(p *conf.Permissions) *server.Permissions {
	if p == nil {
		return nil
	}
	out := &server.Permissions{
		Publish:   subjectPermission(p.Publish),
		Subscribe: subjectPermission(p.Subscribe),
	}
	if p.Responses != nil {
		out.Responses = &server.ResponsePermission{MaxMsgs: p.Responses.MaxMsgs, Expires: p.Responses.Expires}
	}
	return out
}

func subjectPermission(p *conf.SubjectPermission) *server.SubjectPermission {
	if p == nil {
		return nil
	}
	return &server.SubjectPermission{Allow: p.Allow, Deny: p.Deny}
}

// webSocket maps the websocket block (nil: no listener).
func webSocket(w *conf.WebSocket) server.WebSocketOptions {
	if w == nil {
		return server.WebSocketOptions{}
	}
	out := server.WebSocketOptions{
		Host: w.Host, Port: w.Port, Advertise: w.Advertise, TLS: tlsOptions(w.TLS), NoTLS: w.NoTLS,
		SameOrigin: w.SameOrigin, AllowedOrigins: w.AllowedOrigins, Compression: w.Compression,
		HandshakeTimeout: w.HandshakeTimeout, PingInterval: w.PingInterval, Headers: w.Headers,
		NoAuthUser: w.NoAuthUser, UserCookie: w.UserCookie, PassCookie: w.PassCookie, TokenCookie: w.TokenCookie,
		JWTCookie: w.JWTCookie,
	}
	if a := w.Authorization; a != nil {
		out.Authorization = server.WebSocketAuth{User: a.User, Password: a.Password, Token: a.Token, Timeout: a.Timeout}
	}
	return out
}

// mqttOptions maps the mqtt block (nil: no listener).
func mqttOptions(m *conf.MQTT) server.MQTTOptions {
	if m == nil {
		return server.MQTTOptions{}
	}
	out := server.MQTTOptions{
		Host: m.Host, Port: m.Port, TLS: tlsOptions(m.TLS), NoAuthUser: m.NoAuthUser,
		RejectQoS2Publish: m.RejectQoS2Publish, DowngradeQoS2Subscribe: m.DowngradeQoS2Subscribe,
		AckWait: m.AckWait, MaxAckPending: m.MaxAckPending, JSAPITimeout: m.JSAPITimeout,
		ConsumerMemoryStorage: m.ConsumerMemoryStorage, ConsumerInactiveThreshold: m.ConsumerInactiveThreshold,
	}
	if a := m.Authorization; a != nil {
		out.Authorization = server.WebSocketAuth{User: a.User, Password: a.Password, Token: a.Token, Timeout: a.Timeout}
	}
	return out
}

// tlsOptions maps the tls block (nil: none).
func tlsOptions(t *conf.TLS) server.TLSOptions {
	if t == nil {
		return server.TLSOptions{}
	}
	return server.TLSOptions{
		CertFile: t.CertFile, KeyFile: t.KeyFile, CAFile: t.CAFile,
		Verify: t.Verify, VerifyAndMap: t.VerifyAndMap, Timeout: t.Timeout,
		HandshakeFirst: t.HandshakeFirst, HandshakeFirstFallback: t.HandshakeFirstFallback, MinVersion: t.MinVersion,
		CipherSuites: t.CipherSuites, CurvePreferences: t.CurvePreferences,
	}
}

// plainSecrets reports whether a password or token is written in plain
// text rather than as a bcrypt hash.
func plainSecrets(a server.Authorization) bool {
	plain := func(secret string) bool { return secret != "" && !server.IsBcrypt(secret) }
	if plain(a.Token) || plain(a.Password) {
		return true
	}
	for _, u := range a.Users {
		if plain(u.Password) {
			return true
		}
	}
	return false
}

// plainSystemSecrets is plainSecrets for the accounts' users.
func plainSystemSecrets(a server.SystemAccount, accounts []server.Account) bool {
	if plainSecrets(server.Authorization{Users: a.Users}) {
		return true
	}
	for _, acc := range accounts {
		if plainSecrets(server.Authorization{Users: acc.Users}) {
			return true
		}
	}
	return false
}

// jetstreamLimits maps the jetstream block's limits.
func jetstreamLimits(l conf.JetStreamLimits) server.JetStreamLimits {
	return server.JetStreamLimits{
		MaxAckPending:       l.MaxAckPending,
		MaxRequestBatch:     l.MaxRequestBatch,
		DuplicateWindow:     l.DuplicateWindow,
		DefaultMaxConsumers: l.DefaultMaxConsumers,
		MaxHAAssets:         l.MaxHAAssets,
	}
}

// jetstreamBatchLimits maps the limits block's batch block.
func jetstreamBatchLimits(b conf.JetStreamBatchLimits) server.JetStreamBatchLimits {
	return server.JetStreamBatchLimits{
		MaxInflightPerStream: b.MaxInflightPerStream,
		MaxInflightTotal:     b.MaxInflightTotal,
		MaxSize:              b.MaxMsgs,
		Timeout:              b.Timeout,
		MaxStagedBytes:       b.MaxStagedBytes,
	}
}
