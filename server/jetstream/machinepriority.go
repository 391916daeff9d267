package jetstream

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/nats-io/nuid"
)

// Priority groups, as the reference has them (API level 1): a pull
// consumer with priority_groups and a priority_policy serves only pulls
// that name one of its groups, and picks among them by the policy:
//
//   - overflow: a pull with min_pending or min_ack_pending is served only
//     while the consumer has at least that many messages left to deliver
//     (counting the one being delivered) or unacknowledged, so standby
//     workers take over only when the primary ones fall behind;
//   - pinned_client: one client at a time gets every message. The first
//     delivery to a pull without a pin id pins its client: the server
//     makes up an id and sends it in the Nats-Pin-Id header of every
//     delivery; the pinned client's later pulls carry it in "id". Pulls
//     with another id get 423, pulls without one wait. The pin is
//     dropped after priority_timeout without a pull from the pinned
//     client, or by $JS.API.CONSUMER.UNPIN, and passes to the next pull;
//   - prioritized: waiting pulls are served in order of their priority
//     (0 first, up to 9), in arrival order within a priority.
//
// All of it lives in priority, which a consumer without priority groups
// does not have (m.prio is nil, the one thing the hot paths look at).
// Like the rest of the machine it reads no clock: the pin's expiry is a
// deadline handed back to the driver.

// PriorityPolicy is a consumer's priority_policy; "" is the reference's
// "none", which it never echoes.
type PriorityPolicy string

// The policies of the reference (nats-server 2.15.2).
const (
	PriorityOverflow     PriorityPolicy = "overflow"
	PriorityPinnedClient PriorityPolicy = "pinned_client"
	PriorityPrioritized  PriorityPolicy = "prioritized"
)

// UnmarshalJSON takes the reference's names, and refuses others with its
// decoding error.
func (p *PriorityPolicy) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("unknown priority policy: %s", b)
	}
	switch PriorityPolicy(s) {
	case "none":
		*p = ""
	case PriorityOverflow, PriorityPinnedClient, PriorityPrioritized:
		*p = PriorityPolicy(s)
	default:
		return fmt.Errorf("unknown priority policy: %s", b)
	}
	return nil
}

// defaultPinnedTTL is the reference's priority_timeout for pinned_client.
const defaultPinnedTTL = 2 * time.Minute

// hdrPinID carries the pin to the pinned client, in every delivery.
const hdrPinID = "Nats-Pin-Id"

// validGroupName is the reference's rule for a priority group name.
var validGroupName = regexp.MustCompile(`^[a-zA-Z0-9/_=-]{1,16}$`)

// checkPriority applies the reference's rules for the priority fields of
// a normalized config.
func (c *consumerConfig) checkPriority() *apiError {
	c.PinnedTTL = max(c.PinnedTTL, 0) // negative reads as unset
	if c.PriorityPolicy == PriorityPinnedClient && c.PinnedTTL == 0 {
		c.PinnedTTL = int64(defaultPinnedTTL)
	}
	if c.PriorityPolicy == "" {
		switch {
		case len(c.PriorityGroups) > 0:
			return newAPIError(400, 10196, "consumer can not have priority groups when policy is none")
		case c.PinnedTTL > 0:
			return newAPIError(400, 10197, "PinnedTTL cannot be set when PriorityPolicy is none")
		}
		return nil
	}
	switch {
	case c.DeliverSubject != "":
		return newAPIError(400, 10178, "priority groups can not be used with push consumers")
	case len(c.PriorityGroups) == 0:
		return newAPIError(400, 10159, "Setting PriorityPolicy requires at least one PriorityGroup to be set")
	case c.GroupBy != nil:
		return errGroupBy("x_bus_group_by can not be combined with priority groups")
	}
	for _, g := range c.PriorityGroups {
		if e := checkGroupName(g); e != nil {
			return e
		}
	}
	return nil
}

// checkGroupName refuses an empty or malformed priority group name.
func checkGroupName(g string) *apiError {
	if g == "" {
		return newAPIError(400, 10161, "Group name cannot be an empty string")
	}
	if !validGroupName.MatchString(g) {
		return newAPIError(400, 10162, "Valid priority group name must match A-Z, a-z, 0-9, -_/=)+ and may not exceed 16 characters")
	}
	return nil
}

// PullPriority is the priority part of a JSON pull request. It is
// exported only so that encoding/json allocates it, embedded by pointer
// in pullBody, for the pulls that have one: a plain pull stays as small
// as before (see BenchmarkMachineFetch).
type PullPriority struct {
	Group         string `json:"group"`
	MinPending    int64  `json:"min_pending"`
	MinAckPending int64  `json:"min_ack_pending"`
	ID            string `json:"id"`
	Priority      int    `json:"priority"`
}

// priority is a consumer's priority groups state.
type priority struct {
	policy PriorityPolicy
	groups []string
	ttl    time.Duration // pinned_client: how long a pin lasts without a pull
	newID  func() string
	// reqs holds the priority part of the waiting pulls that had one
	// (JSON bodies). Entries of pulls gone from waiting are pruned now
	// and then (prune): keeping them is only memory.
	reqs map[*pullRequest]*PullPriority

	pin        string // the pinned client's id; "" while nobody is pinned
	pinGroup   string
	pinnedAt   time.Time
	pinExpires time.Time
}

func newPriority(cfg consumerConfig, newID func() string) *priority {
	if newID == nil {
		newID = nuid.Next
	}
	return &priority{
		policy: cfg.PriorityPolicy, groups: cfg.PriorityGroups, ttl: time.Duration(cfg.PinnedTTL),
		newID: newID, reqs: map[*pullRequest]*PullPriority{},
	}
}

// checkPull refuses a JSON pull whose priority part (nil: none) the
// consumer cannot serve, with the reference's status, and keeps the pin
// alive when the pinned client pulls. It returns the priority part the
// pull waits with: nil for a consumer without priority groups.
func (m *machine) checkPull(pg *PullPriority, now time.Time) (*PullPriority, string) {
	if pg == nil {
		if m.prio == nil {
			return nil, ""
		}
		pg = &PullPriority{}
	}
	if status := m.checkPullPriority(pg, now); status != "" {
		return nil, status
	}
	return pg, ""
}

func (m *machine) checkPullPriority(pg *PullPriority, now time.Time) string {
	policy := m.cfg.PriorityPolicy
	switch {
	case (pg.MinPending != 0 || pg.MinAckPending != 0) && policy != PriorityOverflow:
		return "400 Bad Request - Not a Overflow Priority consumer"
	case pg.ID != "" && policy != PriorityPinnedClient:
		return "400 Bad Request - Not a Pinned Client Priority consumer"
	case pg.Priority < 0 || pg.Priority > 9:
		return "400 Bad Request - Priority must be between 0 and 9"
	}
	p := m.prio
	switch {
	case p == nil:
		return ""
	case pg.Group == "":
		return "400 Bad Request - Priority Group missing"
	case !slices.Contains(p.groups, pg.Group):
		return "400 Bad Request - Invalid Priority Group"
	case p.pin != "" && pg.ID == p.pin:
		p.pinExpires = now.Add(p.ttl)
	case p.pin != "" && pg.ID != "":
		return "423 Nats-Pin-Id mismatch"
	}
	return ""
}

// enqueue adds an accepted pull to the waiting ones: in priority order
// for prioritized (a pull without a priority part last), at the end
// otherwise.
func (m *machine) enqueue(req *pullRequest, pg *PullPriority) {
	p := m.prio
	if pg != nil {
		p.reqs[req] = pg
	}
	if len(p.reqs) > 2*len(m.waiting)+16 {
		p.prune(m.waiting)
	}
	if p.policy != PriorityPrioritized {
		m.waiting = append(m.waiting, req)
		return
	}
	rank := p.rank(req)
	i := len(m.waiting)
	for i > 0 && p.rank(m.waiting[i-1]) > rank {
		i--
	}
	m.waiting = slices.Insert(m.waiting, i, req)
}

// rank is a waiting pull's priority for prioritized.
func (p *priority) rank(r *pullRequest) int {
	if pg := p.reqs[r]; pg != nil {
		return pg.Priority
	}
	return math.MaxInt32
}

// prune forgets the priority parts of pulls no longer waiting.
func (p *priority) prune(waiting []*pullRequest) {
	live := make(map[*pullRequest]*PullPriority, len(waiting))
	for _, r := range waiting {
		if pg, ok := p.reqs[r]; ok {
			live[r] = pg
		}
	}
	p.reqs = live
}

// priorityTarget is target for a consumer with priority groups: when a
// message is waiting, the first waiting pull the policy lets take it,
// moved to the front with the pulls passed over behind it (the reference
// cycles them to the end of its queue), or nil. A pull still holding a
// pin id that is no longer the consumer's gets 423. (The reference looks
// at its waiting pulls only with a message in hand, so nothing moves and
// nobody is refused while there is none.)
func (m *machine) priorityTarget(now time.Time) *pullRequest {
	p := m.prio
	if len(m.waiting) == 0 || !m.hasCandidate(now) {
		return nil
	}
	for i := 0; i < len(m.waiting); {
		r := m.waiting[i]
		if !m.src.HasInterest(r.reply) { // the requester went away
			m.waiting = slices.Delete(m.waiting, i, i+1)
			continue
		}
		pg := p.reqs[r]
		ok := true
		switch p.policy {
		case PriorityPinnedClient:
			id := ""
			if pg != nil {
				id = pg.ID
			}
			if id != "" && id != p.pin {
				m.status(r.reply, pendingStatus("423 Nats-Wrong-Pin-Id", r))
				m.waiting = slices.Delete(m.waiting, i, i+1)
				continue
			} else if p.pin != "" && id != p.pin {
				ok = false
			}
		case PriorityOverflow:
			ok = m.overflowAdmits(pg, 0)
		}
		if !ok {
			i++
			continue
		}
		if i > 0 {
			passed := slices.Clone(m.waiting[:i])
			n := copy(m.waiting, m.waiting[i:])
			copy(m.waiting[n:], passed)
		}
		return r
	}
	return nil
}

// overflowAdmits reports whether an overflow pull may take the next
// message, fresh being the first deliveries already gathered for it in
// this step and not yet recorded: a pull asking for neither minimum
// always may; otherwise while the messages left to deliver, counting
// the next one, reach min_pending, or the unacknowledged ones reach
// min_ack_pending.
func (m *machine) overflowAdmits(pg *PullPriority, fresh int) bool {
	if pg == nil || pg.MinPending <= 0 && pg.MinAckPending <= 0 {
		return true
	}
	if pg.MinPending > 0 {
		left := m.pendingAfterNext()
		if len(m.due) > 0 { // a redelivery is next: it is not among them
			left++
		}
		if uint64(pg.MinPending) <= left {
			return true
		}
	}
	return pg.MinAckPending > 0 && pg.MinAckPending <= int64(m.ledger.Info().NumAckPending+fresh)
}

// gatherAdmits is gather's check before each message for r, with the
// messages gathered so far and where they came from.
func (m *machine) gatherAdmits(r *pullRequest, froms []int) bool {
	if m.prio.policy != PriorityOverflow {
		return true
	}
	pg := m.prio.reqs[r]
	if pg == nil {
		return true
	}
	fresh := 0
	for _, f := range froms {
		if f != fromDue {
			fresh++
		}
	}
	return m.overflowAdmits(pg, fresh)
}

// pinFor is the Nats-Pin-Id of deliveries to r, pinning r's client
// first when nobody is pinned. pinned is false for the policies that
// send no pin.
func (m *machine) pinFor(r *pullRequest, now time.Time) (pin string, pinned bool) {
	p := m.prio
	if p.policy != PriorityPinnedClient {
		return "", false
	}
	if pg := p.reqs[r]; p.pin == "" && pg != nil && pg.Group != "" {
		p.pin, p.pinGroup, p.pinnedAt, p.pinExpires = p.newID(), pg.Group, now, now.Add(p.ttl)
		pg.ID = p.pin
		m.advise("$JS.EVENT.ADVISORY.CONSUMER.PINNED", pinnedAdvisory{
			Type: "io.nats.jetstream.advisory.v1.consumer_group_pinned", ID: nuid.Next(), Timestamp: now.UTC(),
			Stream: m.stream, Consumer: m.name, Group: pg.Group, PinnedID: p.pin,
		})
	}
	return p.pin, true
}

// expirePin drops the pin of a client that has not pulled for
// priority_timeout.
func (m *machine) expirePin(now time.Time) {
	if p := m.prio; p.pin != "" && !now.Before(p.pinExpires) {
		m.unpin(p.pinGroup, "timeout", now)
	}
}

// unpin drops the pin (if any) and says so, for group and why.
func (m *machine) unpin(group, reason string, now time.Time) {
	p := m.prio
	p.pin, p.pinGroup, p.pinnedAt, p.pinExpires = "", "", time.Time{}, time.Time{}
	m.advise("$JS.EVENT.ADVISORY.CONSUMER.UNPINNED", unpinnedAdvisory{
		Type: "io.nats.jetstream.advisory.v1.consumer_group_unpinned", ID: nuid.Next(), Timestamp: now.UTC(),
		Stream: m.stream, Consumer: m.name, Group: group, Reason: reason,
	})
}

// Unpin is $JS.API.CONSUMER.UNPIN for group (one of the consumer's): the
// pin is dropped, and the next delivery pins the client it goes to.
func (m *machine) Unpin(group string, now time.Time) actions {
	m.unpin(group, "admin", now)
	return m.step(now)
}

// pinDeadline is when the pin runs out; zero without one.
func (m *machine) pinDeadline() time.Time {
	if m.prio.pin == "" {
		return time.Time{}
	}
	return m.prio.pinExpires
}

// priorityGroupState is a group in consumer info's priority_groups.
type priorityGroupState struct {
	Group    string    `json:"group"`
	PinnedID string    `json:"pinned_client_id,omitempty"`
	PinnedTS time.Time `json:"pinned_ts,omitempty"` // the zero time when unpinned, as the reference
}

// pinState is what info reads of the pin: its id and when it was made.
func (m *machine) pinState() (string, time.Time) {
	if m.prio == nil {
		return "", time.Time{}
	}
	return m.prio.pin, m.prio.pinnedAt
}

type pinnedAdvisory struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Stream    string    `json:"stream"`
	Consumer  string    `json:"consumer"`
	Group     string    `json:"group"`
	PinnedID  string    `json:"pinned_id"`
}

type unpinnedAdvisory struct {
	Type      string    `json:"type"`
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Stream    string    `json:"stream"`
	Consumer  string    `json:"consumer"`
	Group     string    `json:"group"`
	Reason    string    `json:"reason"` // "timeout" or "admin"
}
