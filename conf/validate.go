package conf

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Validate reports every field of c outside its allowed range, joined, each a
// *KeyError wrapping ErrOutOfRange with an empty Source. Load calls it; call
// it yourself on a Config you build by hand.
func (c Config) Validate() error { return join(c.check()) }

// check is Validate without the join, so that Load can fill in sources.
func (c Config) check() []*KeyError {
	var errs []*KeyError
	bad := func(key, format string, args ...any) {
		errs = append(errs, &KeyError{Key: key, Reason: fmt.Sprintf(format, args...), Err: ErrOutOfRange})
	}
	port := func(key string, p int) {
		if p < -1 || p > 65535 {
			bad(key, "%d is out of range 0..65535 (or -1 for a free port)", p)
		}
	}
	positive := func(key string, isPositive bool, shown string) {
		if !isPositive {
			bad(key, "%s must be more than 0", shown)
		}
	}

	if strings.TrimSpace(c.Host) == "" {
		bad("host", "must not be empty")
	}
	port("port", c.Port)
	port("http_port", c.HTTPPort)
	port("https_port", c.HTTPSPort)
	if c.HTTPSPort != 0 && c.TLS == nil {
		bad("https_port", "needs the tls block's certificate")
	}
	if c.HTTPAuth && c.Authorization == nil {
		bad("http_auth", "needs the authorization block (users, a user or a token) to check credentials against")
	}
	// nats-server refuses names with spaces: they break subjects such as
	// $SYS.SERVER.<name>.…
	if strings.ContainsAny(c.ServerName, " \t\r\n") {
		bad("server_name", "%q must not contain spaces", c.ServerName)
	}
	if strings.TrimSpace(c.StoreDir) == "" {
		bad("store_dir", "must not be empty")
	}

	positive("max_payload", c.MaxPayload > 0, formatSize(c.MaxPayload))
	switch {
	case c.MaxPayload > maxPayloadLimit:
		bad("max_payload", "%s is more than the %s limit", formatSize(c.MaxPayload), formatSize(maxPayloadLimit))
	case c.MaxPayload > c.MaxPending && c.MaxPending > 0:
		bad("max_payload", "%s is more than max_pending (%s)", formatSize(c.MaxPayload), formatSize(c.MaxPending))
	}
	positive("max_control_line", c.MaxControlLine > 0, formatSize(c.MaxControlLine))
	if c.MaxControlLine > maxInt32 {
		bad("max_control_line", "%s is more than %d bytes", formatSize(c.MaxControlLine), maxInt32)
	}
	// Zero here would mean "refuse every client" to nats-server but "the
	// default" to server.Options, so neither reading is allowed.
	positive("max_connections", c.MaxConnections > 0, fmt.Sprint(c.MaxConnections))
	if c.MaxSubscriptions < 0 {
		bad("max_subscriptions", "%d is negative (0 means unlimited)", c.MaxSubscriptions)
	}
	positive("max_pending", c.MaxPending > 0, formatSize(c.MaxPending))
	if d := c.JetStream.Domain; d != "" && strings.ContainsAny(d, ".*> \t") {
		bad("jetstream", "domain %q may not contain ., * or >", d)
	}
	if c.JetStream.MaxMemory < 0 || c.JetStream.MaxStore < 0 {
		bad("jetstream", "max_memory_store and max_file_store must not be negative")
	}
	if m := c.JetStream.MaxIndexMemory; m != 0 && (m < 1<<20 || m > 1<<40) {
		bad("jetstream", "max_index_memory %s must be between 1MB and 1TB", formatSize(m))
	}
	if si := c.JetStream.SyncInterval; si != 0 && (si < time.Millisecond || si > 10*time.Minute) {
		bad("jetstream", "sync_interval %s must be \"always\" or between 1ms and 10m", formatDuration(si))
	}
	if c.MaxPendingTotal < 0 || c.MaxPendingTotal > 0 && c.MaxPendingTotal < c.MaxPending {
		bad("max_pending_total", "%s is less than max_pending (%s); 0 means the default", formatSize(c.MaxPendingTotal), formatSize(c.MaxPending))
	}
	positive("ping_interval", c.PingInterval > 0, formatDuration(c.PingInterval))
	positive("max_pings_out", c.MaxPingsOut > 0, fmt.Sprint(c.MaxPingsOut))
	positive("write_deadline", c.WriteDeadline > 0, formatDuration(c.WriteDeadline))

	if a := c.ClientAdvertise; a != "" && !validAdvertise(a) {
		bad("client_advertise", "%q is not host, host:port or [ipv6]:port", a)
	}
	positive("max_unauthenticated", c.MaxUnauthenticated > 0, fmt.Sprint(c.MaxUnauthenticated))
	if c.ConnectErrorReports < 0 {
		bad("connect_error_reports", "%d is negative", c.ConnectErrorReports)
	}
	if c.ReconnectErrorReports < 0 {
		bad("reconnect_error_reports", "%d is negative", c.ReconnectErrorReports)
	}
	if c.LameDuckDuration < 0 {
		bad("lame_duck_duration", "%s is negative", formatDuration(c.LameDuckDuration))
	}
	if c.LameDuckGracePeriod < 0 {
		bad("lame_duck_grace_period", "%s is negative", formatDuration(c.LameDuckGracePeriod))
	}
	if c.LameDuckGracePeriod >= c.LameDuckDuration && c.LameDuckDuration > 0 {
		bad("lame_duck_grace_period", "%s must be less than lame_duck_duration (%s)", formatDuration(c.LameDuckGracePeriod), formatDuration(c.LameDuckDuration))
	}
	c.checkLog(bad)
	c.checkAccounts(bad)
	c.checkOperator(bad)
	if c.WebSocket != nil && c.WebSocket.JWTCookie != "" && !c.OperatorMode() {
		bad("websocket.jwt_cookie", "reads a user JWT, which needs operator mode (operator and resolver)")
	}

	if !slices.Contains(levelNames(), strings.ToLower(c.LogLevel.String())) {
		bad("log_level", "%s is not one of %s", c.LogLevel, strings.Join(levelNames(), ", "))
	}
	if c.LogFormat != LogText && c.LogFormat != LogJSON {
		bad("log_format", "%q is not one of %s, %s", c.LogFormat, LogText, LogJSON)
	}
	return errs
}

// validAdvertise reports whether a client_advertise is one the server
// can advertise: host, host:port or [ipv6]:port, as nats-server reads it
// (a missing port is the client port's).
func validAdvertise(a string) bool {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		host, port, err = net.SplitHostPort(a + ":0")
	}
	if err != nil || strings.TrimSpace(host) == "" {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(port))
	return err == nil && n >= -1 && n <= 65535
}
