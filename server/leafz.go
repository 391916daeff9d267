package server

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Leafz is the /leafz document, in the reference's shape: the leaf links
// that are up, each a hub bus joined.
type Leafz struct {
	ServerID string      `json:"server_id"`
	Now      time.Time   `json:"now"`
	NumLeafs int         `json:"leafnodes"`
	Leafs    []*LeafInfo `json:"leafs"`
}

// LeafInfo is one link: the hub's name and address, its traffic, and how
// many subjects of interest it announced (listed with subs=1).
type LeafInfo struct {
	ID          uint64   `json:"id"`
	Name        string   `json:"name"`
	IsSpoke     bool     `json:"is_spoke"`
	Account     string   `json:"account"`
	IP          string   `json:"ip"`
	Port        int      `json:"port"`
	RTT         string   `json:"rtt,omitempty"`
	InMsgs      int64    `json:"in_msgs"`
	OutMsgs     int64    `json:"out_msgs"`
	InBytes     int64    `json:"in_bytes"`
	OutBytes    int64    `json:"out_bytes"`
	NumSubs     uint32   `json:"subscriptions"`
	Subs        []string `json:"subscriptions_list,omitempty"`
	Compression string   `json:"compression,omitempty"`
}

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

func (s *Server) serveLeafz(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	subs := q.bool("subs")
	if q.err != nil {
		badRequest(w, q.err)
		return
	}
	writeJSON(w, s.Leafz(subs))
}
