package server

import (
	"fmt"
	"net"
	"time"

	"github.com/nats-io/jwt/v2"
)

// userWindow is where and when a user JWT lets its user connect from: its
// src networks and its times (in its times_location). It is checked as
// the user connects, and, as in the reference, a connection is closed
// when the time range it connected in ends (armExpiry).
type userWindow struct {
	nets  []*net.IPNet // none: any address
	times []dayRange   // none: any time
	loc   *time.Location
}

// dayRange is a span of a day, from and to as offsets from midnight;
// to < from wraps past midnight.
type dayRange struct{ from, to time.Duration }

// compileUserWindow is l's window, or nil when l does not restrict.
func compileUserWindow(l jwt.UserLimits) (*userWindow, error) {
	if len(l.Src) == 0 && len(l.Times) == 0 {
		return nil, nil
	}
	w := &userWindow{loc: time.Local}
	for _, cidr := range l.Src {
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			return nil, fmt.Errorf("user JWT src %q: %v", cidr, err)
		}
		w.nets = append(w.nets, n)
	}
	if l.Locale != "" {
		loc, err := time.LoadLocation(l.Locale)
		if err != nil {
			return nil, fmt.Errorf("user JWT times_location %q: %v", l.Locale, err)
		}
		w.loc = loc
	}
	for _, r := range l.Times {
		from, err1 := clockOffset(r.Start)
		to, err2 := clockOffset(r.End)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("user JWT times %q-%q: not HH:MM:SS", r.Start, r.End)
		}
		w.times = append(w.times, dayRange{from, to})
	}
	return w, nil
}

// clockOffset is "15:04:05" as the time since midnight.
func clockOffset(s string) (time.Duration, error) {
	t, err := time.Parse(time.TimeOnly, s)
	if err != nil {
		return 0, err
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, nil
}

// admits reports why a connection of user from ip at now is refused, or
// nil.
func (w *userWindow) admits(user, ip string, now time.Time) *authFailure {
	if len(w.nets) > 0 {
		addr := net.ParseIP(ip)
		ok := false
		for _, n := range w.nets {
			ok = ok || addr != nil && n.Contains(addr)
		}
		if !ok {
			return &authFailure{user: user, reason: "address " + ip + " not in the user JWT's src"}
		}
	}
	if len(w.times) > 0 && w.openFor(now) == 0 {
		return &authFailure{user: user, reason: "outside the user JWT's times"}
	}
	return nil
}

// openFor is how long from now the times let the user stay connected:
// the longest of the ranges now is in (as the reference), 0 when now is
// in none. Only for a window with times.
func (w *userWindow) openFor(now time.Time) time.Duration {
	local := now.In(w.loc)
	y, m, d := local.Date()
	since := local.Sub(time.Date(y, m, d, 0, 0, 0, 0, w.loc))
	var longest time.Duration
	for _, r := range w.times {
		var left time.Duration
		switch {
		case r.from <= r.to && since >= r.from && since < r.to:
			left = r.to - since
		case r.from > r.to && since < r.to: // past midnight
			left = r.to - since
		case r.from > r.to && since >= r.from: // before midnight
			left = 24*time.Hour - since + r.to
		}
		longest = max(longest, left)
	}
	return longest
}

// closesAt is when a connection made at now must be closed because its
// times range ends; zero for a window without times.
func (w *userWindow) closesAt(now time.Time) time.Time {
	if w == nil || len(w.times) == 0 {
		return time.Time{}
	}
	return now.Add(w.openFor(now))
}

// userMaxSubs is the user JWT's subscription limit, 0 for none.
func (c *conn) userMaxSubs() int {
	if c.user == nil {
		return 0
	}
	return c.user.maxSubs
}
