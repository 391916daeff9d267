package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// A client_advertise names the address clients should use when the one
// they dialled is not what others can reach (a NAT, a load balancer, a
// Kubernetes Service). As in the reference, it replaces host and port in
// INFO and /varz; a standalone server sends no connect_urls, with or
// without it, since those list the other servers of a cluster.

// advertised is the host and port that adv (host, host:port, [v6]:port)
// tells clients, port being the client port bound: an adv without a port,
// or with port 0 or -1, advertises port. It is "", 0 for adv "".
func advertised(adv string, port int) (string, int, error) {
	if adv == "" {
		return "", 0, nil
	}
	host, p, err := net.SplitHostPort(adv)
	if ae := (*net.AddrError)(nil); errors.As(err, &ae) && strings.Contains(ae.Err, "missing port") {
		host, p, err = net.SplitHostPort(adv + ":" + strconv.Itoa(port))
	}
	if err != nil {
		return "", 0, fmt.Errorf("server: client_advertise %q: %v", adv, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(p))
	if err != nil || n < -1 || n > 65535 {
		return "", 0, fmt.Errorf("server: client_advertise %q: port %q is not a port number", adv, p)
	}
	if n == 0 || n == -1 {
		n = port
	}
	host = strings.TrimSpace(host)
	if host == "" {
		return "", 0, fmt.Errorf("server: client_advertise %q: no host", adv)
	}
	return host, n, nil
}

// infoHostPort is the host and port INFO and /varz report: the
// advertised ones when client_advertise is set (reloadable), else the
// listen host and the bound port.
func (s *Server) infoHostPort() (string, int) {
	if h, p, err := advertised(s.liveOpts().ClientAdvertise, s.port); err == nil && h != "" {
		return h, p
	}
	return s.opts.Host, s.port
}
