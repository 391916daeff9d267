package conf

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

var (
	errNoPath       = errors.New("unix needs a socket path (unix:///dev/log)")
	errSyslogScheme = errors.New("want udp://, tcp:// or unix://")
)

// check reports the logging keys that cannot work.
func (c Config) checkLog(bad func(key, format string, args ...any)) {
	if c.LogSizeLimit < 0 {
		bad("logfile_size_limit", "%s is negative", formatSize(c.LogSizeLimit))
	}
	if c.LogMaxFiles < 0 {
		bad("logfile_max_num", "%d is negative", c.LogMaxFiles)
	}
	if c.MaxTracedMsgLen < 0 {
		bad("max_traced_msg_len", "%d is negative", c.MaxTracedMsgLen)
	}
	if r := c.RemoteSyslog; r != "" {
		if _, _, err := SyslogAddr(r); err != nil {
			bad("remote_syslog", "%v", err)
		}
	}
}

// SyslogAddr is the network and address of a remote_syslog:
// udp://host:port, tcp://host:port, unix:///path, or host:port (UDP),
// as nats-server reads it.
func SyslogAddr(remote string) (network, addr string, err error) {
	if !strings.Contains(remote, "://") {
		remote = "udp://" + remote
	}
	u, err := url.Parse(remote)
	if err != nil {
		return "", "", err
	}
	switch u.Scheme {
	case "udp", "tcp":
		if _, _, err := net.SplitHostPort(u.Host); err != nil {
			return "", "", &url.Error{Op: "parse", URL: remote, Err: err}
		}
		return u.Scheme, u.Host, nil
	case "unix":
		if u.Path == "" {
			return "", "", &url.Error{Op: "parse", URL: remote, Err: errNoPath}
		}
		return "unix", u.Path, nil
	}
	return "", "", &url.Error{Op: "parse", URL: remote, Err: errSyslogScheme}
}
