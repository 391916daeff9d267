package jetstream

import (
	"encoding/json"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// Consumer defaults of the reference (JETSTREAM.md §7.2).
const (
	defaultAckWait           = 30 * time.Second
	defaultMaxAckPending     = 1000
	defaultMaxWaiting        = 512
	defaultEphemeralInactive = 5 * time.Second
)

// consumerConfig is the API form of a consumer's configuration. Fields
// bus does not act on are echoed (see extra).
type consumerConfig struct {
	Durable           string            `json:"durable_name,omitempty"`
	Name              string            `json:"name,omitempty"`
	Description       string            `json:"description,omitempty"`
	DeliverPolicy     DeliverPolicy     `json:"deliver_policy"`
	OptStartSeq       uint64            `json:"opt_start_seq,omitempty"`
	OptStartTime      *time.Time        `json:"opt_start_time,omitempty"`
	AckPolicy         AckPolicy         `json:"ack_policy"`
	AckWait           int64             `json:"ack_wait,omitempty"`
	MaxDeliver        int               `json:"max_deliver,omitempty"`
	BackOff           []int64           `json:"backoff,omitempty"`
	FilterSubject     string            `json:"filter_subject,omitempty"`
	FilterSubjects    []string          `json:"filter_subjects,omitempty"`
	ReplayPolicy      ReplayPolicy      `json:"replay_policy"`
	MaxWaiting        int               `json:"max_waiting,omitempty"`
	MaxAckPending     int               `json:"max_ack_pending,omitempty"`
	InactiveThreshold int64             `json:"inactive_threshold,omitempty"`
	Replicas          int               `json:"num_replicas"`
	MemoryStorage     bool              `json:"mem_storage,omitempty"`
	HeadersOnly       bool              `json:"headers_only,omitempty"`
	DeliverSubject    string            `json:"deliver_subject,omitempty"`
	DeliverGroup      string            `json:"deliver_group,omitempty"`
	FlowControl       bool              `json:"flow_control,omitempty"`
	Heartbeat         int64             `json:"idle_heartbeat,omitempty"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	// Pull limits: the largest batch, expiry and byte budget one pull may
	// ask for (0: any).
	MaxRequestBatch    int   `json:"max_batch,omitempty"`
	MaxRequestExpires  int64 `json:"max_expires,omitempty"`
	MaxRequestMaxBytes int   `json:"max_bytes,omitempty"`
	// RateLimit paces a push consumer's deliveries, in bits per second
	// (machinerate.go).
	RateLimit uint64 `json:"rate_limit_bps,omitempty"`
	// SampleFreq is the share of acks reported as latency metrics
	// ("50%" or "50"; machinesample.go).
	SampleFreq string `json:"sample_freq,omitempty"`
	// PauseUntil holds deliveries back until then (pause.go).
	PauseUntil *time.Time `json:"pause_until,omitempty"`
	// Priority groups: which pulls a pull consumer serves, and how it
	// picks among them (machinepriority.go). PinnedTTL is in ns.
	PriorityGroups []string       `json:"priority_groups,omitempty"`
	PriorityPolicy PriorityPolicy `json:"priority_policy,omitempty"`
	PinnedTTL      int64          `json:"priority_timeout,omitempty"`
	// Direct and Sourcing mark the consumer a sourcing stream makes on
	// its origin (sourcingconsumer.go).
	Direct   bool `json:"direct,omitempty"`
	Sourcing bool `json:"sourcing,omitempty"`

	// bus extensions, prefixed so no future NATS field can clash (see
	// docs/api.md).

	// DeadLetterSubject receives a copy of every message that exhausts
	// max_deliver or is terminated, with headers naming where it came from.
	DeadLetterSubject string `json:"x_bus_dead_letter_subject,omitempty"`
	// BackOffJitter spreads each redelivery delay by up to this fraction
	// either way (0.2 = ±20%), so failing handlers don't retry in step.
	BackOffJitter float64 `json:"x_bus_backoff_jitter,omitempty"`
	// NakBackOff makes a -NAK without a delay wait per the back-off
	// schedule (or ack_wait) instead of redelivering at once.
	NakBackOff bool `json:"x_bus_nak_backoff,omitempty"`
	// LagAlert publishes an advisory when the consumer falls behind and
	// when it catches up (lagalert.go).
	LagAlert *lagAlert `json:"x_bus_lag_alert,omitempty"`
	// GroupBy delivers each group of messages (by a header or a subject
	// token) in order, one at a time, the groups in parallel
	// (machinegroups.go).
	GroupBy *groupBy `json:"x_bus_group_by,omitempty"`

	extra map[string]json.RawMessage
	// owner is the user who created or last updated the consumer
	// (owner.go): stored, never echoed.
	owner string
}

var knownConsumerFields = jsonFieldNames(consumerConfig{})

func (c *consumerConfig) UnmarshalJSON(b []byte) error {
	type plain consumerConfig
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k := range knownConsumerFields {
		delete(all, k)
	}
	c.extra = all
	return nil
}

func (c consumerConfig) MarshalJSON() ([]byte, error) {
	type plain consumerConfig
	return marshalWithExtra(plain(c), c.extra)
}

func (c *consumerConfig) isDurable() bool { return c.Durable != "" }

// filters returns the consumer's subject filters; none means all.
func (c *consumerConfig) filters() []string {
	if c.FilterSubject != "" {
		return []string{c.FilterSubject}
	}
	return c.FilterSubjects
}

// normalize applies the reference's defaults (JETSTREAM.md §7.2), the
// one place they are applied, and checks the config against its stream.
// The result is what responses echo.
func (c *consumerConfig) normalize(scfg streamConfig) *apiError {
	for _, p := range []*int{&c.MaxRequestBatch, &c.MaxRequestMaxBytes} {
		*p = max(*p, 0) // negative reads as unset, as in the reference
	}
	c.MaxRequestExpires = max(c.MaxRequestExpires, 0)
	switch {
	case c.DeliverSubject == "" && c.RateLimit > 0:
		return newAPIError(400, 10086, "consumer in pull mode can not have rate limit set")
	case c.DeliverSubject == "" && c.MaxRequestExpires > 0 && c.MaxRequestExpires < int64(time.Millisecond):
		return newAPIError(400, 10115, "consumer max request expires needs to be >= 1ms")
	}
	if _, err := parseSampleFreq(c.SampleFreq); err != nil {
		return newAPIError(400, 10095, "failed to parse consumer sampling configuration: %v", err)
	}
	if c.PauseUntil != nil {
		if c.PauseUntil.IsZero() {
			c.PauseUntil = nil
		} else {
			utc := c.PauseUntil.UTC()
			c.PauseUntil = &utc
		}
	}
	if c.Durable != "" && c.Name != "" && c.Durable != c.Name {
		return errDurableMismatch()
	}
	if c.Name == "" {
		c.Name = c.Durable
	}
	if !subjects.ValidName(c.Name) {
		return errConsumerCreate("consumer name %q is invalid", c.Name)
	}
	if len(c.Description) > maxDescription {
		return newAPIError(400, 10107, "consumer description is too long, maximum allowed is %d", maxDescription)
	}
	if metadataSize(c.Metadata) > maxMetadata {
		return newAPIError(400, 10135, "consumer metadata exceeds maximum size of %d", maxMetadata)
	}
	// Negative values mean nothing; the reference reads them as unset.
	c.MaxWaiting = max(c.MaxWaiting, 0)
	c.MaxAckPending = max(c.MaxAckPending, -1)
	c.Heartbeat = max(c.Heartbeat, 0)
	c.InactiveThreshold = max(c.InactiveThreshold, 0)
	for _, b := range c.BackOff {
		if b < 0 {
			return newAPIError(400, 10184, "consumer backoff needs to be positive")
		}
	}
	if c.AckWait < 0 {
		return newAPIError(400, 10183, "consumer ack wait needs to be positive")
	}
	if e := c.checkAckFlowControl(); e != nil { // its defaults first, as the reference's
		return e
	}
	if e := c.checkMode(); e != nil {
		return e
	}
	if c.DeliverSubject != "" {
		if subjects.ValidSubject(c.DeliverSubject) && !subjects.ValidLiteral(c.DeliverSubject) {
			return newAPIError(400, 10079, "consumer deliver subject has wildcards")
		}
		if !subjects.ValidLiteral(c.DeliverSubject) {
			return errConsumerCreate("consumer deliver subject is not a valid subject")
		}
		for _, s := range scfg.Subjects {
			if subjects.Overlap(s, c.DeliverSubject) {
				return errDeliverCycle()
			}
		}
	}
	if c.FilterSubject != "" && len(c.FilterSubjects) > 0 {
		return newAPIError(400, 10136, "consumer cannot have both FilterSubject and FilterSubjects specified")
	}
	for _, f := range c.FilterSubjects {
		if f == "" { // [""] is a mistake, not "no filter"
			return newAPIError(400, 10139, "consumer filter in FilterSubjects cannot be empty")
		}
	}
	for i, f := range c.filters() {
		if !subjects.ValidSubject(f) {
			return errConsumerCreate("consumer filter subject is not a valid subset of the interest subjects")
		}
		for _, g := range c.filters()[:i] {
			if subjects.Overlap(f, g) {
				return newAPIError(400, 10138, "consumer subject filters cannot overlap")
			}
		}
	}
	switch c.DeliverPolicy {
	case DeliverByStartSequence:
		if c.OptStartSeq == 0 {
			return errConsumerCreate("consumer delivery policy is deliver by start sequence, but optional start sequence is not set")
		}
	case DeliverByStartTime:
		if c.OptStartTime == nil {
			return errConsumerCreate("consumer delivery policy is deliver by start time, but optional start time is not set")
		}
	case DeliverLastPerSubject:
		if len(c.filters()) == 0 {
			return errLastPerSubjectNeedsFilter()
		}
	}
	if c.AckPolicy != AckNone && c.AckPolicy != AckFlowControl {
		if len(c.BackOff) > 0 {
			c.AckWait = c.BackOff[0]
		}
		if c.AckWait == 0 {
			c.AckWait = int64(defaultAckWait)
		}
		if c.MaxAckPending == 0 {
			c.MaxAckPending = defaultMaxAckPending
		}
	}
	if c.MaxDeliver == 0 || c.MaxDeliver < -1 {
		c.MaxDeliver = -1
	}
	if len(c.BackOff) > 0 && c.MaxDeliver != -1 && c.MaxDeliver <= len(c.BackOff) {
		return newAPIError(400, 10116, "max deliver is required to be > length of backoff values")
	}
	if c.BackOffJitter < 0 || c.BackOffJitter > 1 {
		return errConsumerCreate("x_bus_backoff_jitter must be between 0 and 1")
	}
	if c.LagAlert != nil {
		if e := c.LagAlert.check(); e != nil {
			return e
		}
	}
	if e := c.checkGroupBy(); e != nil {
		return e
	}
	if e := c.checkPriority(); e != nil {
		return e
	}
	if c.MaxWaiting == 0 && c.DeliverSubject == "" {
		c.MaxWaiting = defaultMaxWaiting
	}
	if !c.isDurable() && c.InactiveThreshold == 0 {
		c.InactiveThreshold = int64(defaultEphemeralInactive)
	}
	if scfg.Retention == jetlog.RetentionWorkQueue && !c.sourcing() && c.AckPolicy != AckExplicit && c.AckPolicy != AckFlowControl {
		if c.DeliverSubject == "" && c.AckPolicy == AckNone {
			return errWorkQueueAckExplicit()
		}
		return newAPIError(400, 10098, "workqueue stream requires explicit ack")
	}
	if scfg.Retention == jetlog.RetentionWorkQueue && !c.sourcing() && c.DeliverPolicy != DeliverAll {
		return newAPIError(400, 10101, "consumer must be deliver all on workqueue stream")
	}
	return c.checkDeadLetterSubject(scfg)
}

// checkMode applies the reference's rules that tell push consumers from
// pull consumers.
func (c *consumerConfig) checkMode() *apiError {
	if c.DeliverSubject != "" {
		switch {
		case c.MaxWaiting != 0:
			return newAPIError(400, 10080, "consumer in push mode can not set max waiting")
		case c.MaxAckPending > 0 && c.AckPolicy == AckNone:
			return newAPIError(400, 10082, "consumer requires ack policy for max ack pending")
		case c.Heartbeat > 0 && c.Heartbeat < int64(100*time.Millisecond):
			return newAPIError(400, 10083, "consumer idle heartbeat needs to be >= 100ms")
		}
		return nil
	}
	switch {
	case c.Heartbeat > 0:
		return newAPIError(400, 10088, "consumer idle heartbeat requires a push based consumer")
	case c.FlowControl:
		return newAPIError(400, 10089, "consumer flow control requires a push based consumer")
	}
	return nil
}

// checkDeadLetterSubject keeps the server's own republishing from being
// a back door: a dead letter may not go to the server's API or system
// subjects, into someone's inbox, or back to this same consumer (which
// would dead-letter its own dead letters forever).
func (c *consumerConfig) checkDeadLetterSubject(scfg streamConfig) *apiError {
	d := c.DeadLetterSubject
	if d == "" {
		return nil
	}
	if !subjects.ValidLiteral(d) {
		return errConsumerCreate("x_bus_dead_letter_subject %q is not a valid subject", d)
	}
	for _, reserved := range []string{"$JS.>", "$JSC.>", "$NRG.>", "$SYS.>", "$KV.>", "$O.>", "$BUS.>", "_INBOX.>"} {
		if subjects.Matches(reserved, d) {
			return errConsumerCreate("x_bus_dead_letter_subject %q is a server-internal subject", d)
		}
	}
	for _, s := range scfg.Subjects {
		if !subjects.Matches(s, d) {
			continue
		}
		for _, f := range c.filterList() {
			if subjects.Matches(f, d) {
				return errConsumerCreate("x_bus_dead_letter_subject %q would be delivered to this consumer again", d)
			}
		}
	}
	return nil
}

// storedDurably reports whether the consumer's state is journaled: any
// consumer of a file stream, unless it asked for memory. Ephemeral ones
// too, as the reference keeps them: they come back after a restart with
// their state, and their inactive threshold still ends them (nats.go's
// Consume on one goes on across a restart of the server).
func (c *consumerConfig) storedDurably(scfg streamConfig) bool {
	return !c.MemoryStorage && scfg.Storage != jetlog.StorageMemory
}

// sequencePair is a position in the stream and the consumer's deliveries.
type sequencePair struct {
	Consumer uint64     `json:"consumer_seq"`
	Stream   uint64     `json:"stream_seq"`
	Last     *time.Time `json:"last_active,omitempty"`
}

// consumerInfo is the body of consumer create/info responses and list
// items.
type consumerInfo struct {
	Type           string         `json:"type,omitempty"`
	Stream         string         `json:"stream_name"`
	Name           string         `json:"name"`
	Created        time.Time      `json:"created"`
	Config         consumerConfig `json:"config"`
	Delivered      sequencePair   `json:"delivered"`
	AckFloor       sequencePair   `json:"ack_floor"`
	NumAckPending  int            `json:"num_ack_pending"`
	NumRedelivered int            `json:"num_redelivered"`
	NumWaiting     int            `json:"num_waiting"`
	NumPending     uint64         `json:"num_pending"`
	// PushBound is whether a push consumer's deliver subject has a
	// listener: nats.go refuses a second subscription to a bound one.
	PushBound bool         `json:"push_bound,omitempty"`
	Cluster   *clusterInfo `json:"cluster,omitempty"`
	TS        time.Time    `json:"ts"`
	// DeadLettered counts messages sent to the dead-letter subject or
	// dropped after max deliveries (bus extension).
	DeadLettered int64 `json:"x_bus_dead_lettered"`
	// DeadLettersLost counts dead letters nothing stored: no stream
	// captures the dead-letter subject, or its stream refused them (bus
	// extension).
	DeadLettersLost int64 `json:"x_bus_dead_letters_lost"`
	// LagAlerting is whether the consumer's x_bus_lag_alert is firing.
	LagAlerting    bool  `json:"x_bus_lag_alerting,omitempty"`
	Paused         bool  `json:"paused,omitempty"`
	PauseRemaining int64 `json:"pause_remaining,omitempty"` // ns
	// PriorityGroups is the pin of the first priority group, as the
	// reference reports it (machinepriority.go).
	PriorityGroups []priorityGroupState `json:"priority_groups,omitempty"`
	// Suspended says why the owner's rights no longer cover the consumer
	// (bus extension; rightscheck.go).
	Suspended *apiError `json:"x_bus_suspended,omitempty"`
}

// filterList is the filters, with ">" standing for none.
func (c *consumerConfig) filterList() []string {
	if f := c.filters(); len(f) > 0 {
		return f
	}
	return []string{">"}
}
