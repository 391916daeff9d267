package server

import (
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/bus-dev/bus/server/monitor"
)

// The /leafz document (see server/monitor).
type (
	Leafz    = monitor.Leafz
	LeafInfo = monitor.LeafInfo
)

// Leafz reports the links that are up; with subs, the hub's interest.
func (s *Server) Leafz(subs bool) Leafz {
	out := Leafz{ServerID: s.id, Now: time.Now().UTC(), Leafs: []*LeafInfo{}}
	for _, l := range s.leafLinks {
		c := l.current()
		if c == nil {
			continue
		}
		out.Leafs = append(out.Leafs, c.leafInfo(subs))
	}
	out.NumLeafs = len(out.Leafs)
	return out
}

func (c *conn) leafInfo(withSubs bool) *LeafInfo {
	outMsgs, outBytes := c.out.counts()
	li := &LeafInfo{
		ID: c.id, Name: c.leaf.info.Name, IsSpoke: true, Account: globalAccount,
		InMsgs: c.inMsgs.Load(), InBytes: c.inBytes.Load(), OutMsgs: outMsgs, OutBytes: outBytes,
		Compression: "off",
	}
	if host, port, err := net.SplitHostPort(c.raw.RemoteAddr().String()); err == nil {
		li.IP = host
		li.Port, _ = strconv.Atoi(port)
	}
	c.mu.Lock()
	if c.rtt > 0 {
		li.RTT = c.rtt.String()
	}
	li.NumSubs = uint32(len(c.subs))
	if withSubs {
		for _, sub := range c.subs {
			li.Subs = append(li.Subs, sub.subject)
		}
	}
	c.mu.Unlock()
	slices.Sort(li.Subs)
	return li
}

// leafCount is how many links are up, for /varz.
func (s *Server) leafCount() int {
	n := 0
	for _, l := range s.leafLinks {
		if l.current() != nil {
			n++
		}
	}
	return n
}
