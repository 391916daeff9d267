package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// streamConfig is the API form of a stream's configuration. Fields bus
// does not act on are echoed back as sent (see extra), because clients
// re-send them and compare.
type streamConfig struct {
	Name                 string           `json:"name"`
	Description          string           `json:"description,omitempty"`
	Subjects             []string         `json:"subjects,omitempty"`
	Retention            jetlog.Retention `json:"retention"`
	MaxConsumers         int64            `json:"max_consumers"`
	MaxMsgs              int64            `json:"max_msgs"`
	MaxBytes             int64            `json:"max_bytes"`
	MaxAge               int64            `json:"max_age"`
	MaxMsgsPerSubject    int64            `json:"max_msgs_per_subject"`
	MaxMsgSize           int32            `json:"max_msg_size"`
	Discard              jetlog.Discard   `json:"discard"`
	DiscardNewPerSubject bool             `json:"discard_new_per_subject,omitempty"`
	Storage              jetlog.Storage   `json:"storage"`
	Replicas             int              `json:"num_replicas"`
	NoAck                bool             `json:"no_ack,omitempty"`
	DuplicateWindow      int64            `json:"duplicate_window"`
	Compression          string           `json:"compression"`
	AllowDirect          bool             `json:"allow_direct"`
	MirrorDirect         bool             `json:"mirror_direct"`
	Sealed               bool             `json:"sealed"`
	DenyDelete           bool             `json:"deny_delete"`
	DenyPurge            bool             `json:"deny_purge"`
	AllowRollup          bool             `json:"allow_rollup_hdrs"`
	AllowMsgTTL          bool             `json:"allow_msg_ttl"`
	AllowMsgCounter      bool             `json:"allow_msg_counter,omitempty"`
	AllowAtomic          bool             `json:"allow_atomic,omitempty"`
	AllowBatched         bool             `json:"allow_batched,omitempty"` // fast batches (batchfast.go)
	AllowMsgSchedules    bool             `json:"allow_msg_schedules,omitempty"`
	// PersistMode "async" acks a publish before its fsync, as the
	// reference's; bus serves it with "interval" durability.
	PersistMode      string                  `json:"persist_mode,omitempty"`
	SubjectTransform *subjectTransformConfig `json:"subject_transform,omitempty"`
	RePublish        *rePublishConfig        `json:"republish,omitempty"`
	FirstSeq         uint64                  `json:"first_seq,omitempty"`
	Mirror           *sourceConfig           `json:"mirror,omitempty"`
	Sources          []*sourceConfig         `json:"sources,omitempty"`
	// SubjectDeleteMarkerTTL (ns) asks for a delete marker where a
	// subject's last message aged out or expired, itself kept this long.
	SubjectDeleteMarkerTTL int64             `json:"subject_delete_marker_ttl,omitempty"`
	ConsumerLimits         json.RawMessage   `json:"consumer_limits,omitempty"`
	Metadata               map[string]string `json:"metadata,omitempty"`

	// Durability is bus's own: "always" (default: fsync before the ack),
	// "interval" or "none". The x_bus_ prefix keeps it clear of any
	// future NATS field.
	Durability jetlog.Durability `json:"x_bus_durability,omitempty"`
	// SyncInterval (ns) bounds the loss window of "interval" durability.
	SyncInterval int64 `json:"x_bus_sync_interval,omitempty"`

	extra map[string]json.RawMessage // fields bus does not know, echoed
	// owner is the user who created or last updated the stream
	// (owner.go): stored, never echoed.
	owner string
}

// knownStreamFields lists the JSON keys streamConfig decodes itself.
var knownStreamFields = jsonFieldNames(streamConfig{})

func (c *streamConfig) UnmarshalJSON(b []byte) error {
	type plain streamConfig
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k := range knownStreamFields {
		delete(all, k)
	}
	c.extra = all
	return nil
}

func (c streamConfig) MarshalJSON() ([]byte, error) {
	type plain streamConfig
	return marshalWithExtra(plain(c), c.extra)
}

// logConfig maps the API config to jetlog's.
func (c streamConfig) logConfig() jetlog.StreamConfig {
	raw, _ := storedWithOwner(c, c.owner)
	return jetlog.StreamConfig{
		Name:                   c.Name,
		Subjects:               c.Subjects,
		Retention:              c.Retention,
		MaxConsumers:           c.MaxConsumers,
		MaxMsgs:                c.MaxMsgs,
		MaxBytes:               c.MaxBytes,
		MaxAge:                 time.Duration(c.MaxAge),
		MaxMsgsPerSubject:      c.MaxMsgsPerSubject,
		MaxMsgSize:             c.MaxMsgSize,
		Discard:                c.Discard,
		DiscardNewPerSubject:   c.DiscardNewPerSubject,
		Storage:                c.Storage,
		DuplicateWindow:        time.Duration(c.DuplicateWindow),
		Durability:             c.Durability,
		SyncInterval:           time.Duration(c.SyncInterval),
		Compression:            c.Compression == "s2",
		MsgTTL:                 c.AllowMsgTTL,
		SubjectDeleteMarkerTTL: time.Duration(c.SubjectDeleteMarkerTTL),
		Raw:                    raw,
	}
}

// normalize applies the reference's defaults (JETSTREAM.md §4.1) and
// validates; the result is what responses echo.
func (c *streamConfig) normalize() *apiError {
	if !subjects.ValidName(c.Name) {
		return errStreamConfig("invalid stream name %q", c.Name)
	}
	if len(c.Description) > maxDescription {
		return errStreamConfig("stream description is too long, maximum allowed is %d", maxDescription)
	}
	if metadataSize(c.Metadata) > maxMetadata {
		return errStreamConfig("stream metadata exceeds maximum size of %d bytes", maxMetadata)
	}
	if len(c.Subjects) == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.Subjects = []string{c.Name}
	}
	if len(c.Subjects) > maxStreamSubjects {
		return errStreamConfig("stream has %d subjects, maximum allowed is %d", len(c.Subjects), maxStreamSubjects)
	}
	seen := make(map[string]bool, len(c.Subjects))
	for _, s := range c.Subjects {
		if !subjects.ValidSubject(s) {
			return errStreamConfig("invalid subject %q", s)
		}
		if seen[s] {
			return errStreamConfig("duplicate subjects detected")
		}
		seen[s] = true
		if e := checkReservedSubject(s, c.NoAck); e != nil {
			return e
		}
	}
	if a, b, ok := selfOverlap(c.Subjects); ok {
		return errStreamConfig("subject %q overlaps with %q", a, b)
	}
	if c.SyncInterval < 0 || c.SyncInterval > 0 && (c.SyncInterval < int64(minSyncInterval) || c.SyncInterval > int64(maxSyncInterval)) {
		// A tiny interval would sync an idle stream in a loop.
		return errStreamConfig("x_bus_sync_interval must be between %v and %v", minSyncInterval, maxSyncInterval)
	}
	if c.Retention == "" {
		c.Retention = jetlog.RetentionLimits
	}
	if c.Discard == "" {
		c.Discard = jetlog.DiscardOld
	}
	if c.Storage == "" {
		c.Storage = jetlog.StorageFile
	}
	switch c.Compression {
	case "":
		c.Compression = "none"
	case "none", "s2":
	default:
		return errInvalidJSON(errors.New("unknown compression algorithm"))
	}
	if e := c.normalizePersistMode(); e != nil {
		return e
	}
	if c.Durability == "" {
		c.Durability = jetlog.DurabilityAlways
	}
	for _, p := range []*int64{&c.MaxConsumers, &c.MaxMsgs, &c.MaxBytes, &c.MaxMsgsPerSubject} {
		if *p == 0 || *p < -1 {
			*p = -1
		}
	}
	if c.MaxMsgSize == 0 || c.MaxMsgSize < -1 {
		c.MaxMsgSize = -1
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Replicas > 1 {
		return errReplicas()
	}
	if c.MaxAge < 0 {
		return errStreamConfig("max age needs to be >= 0")
	}
	if c.MaxAge > 0 && c.MaxAge < int64(100*time.Millisecond) {
		return errStreamConfig("max age needs to be >= 100ms")
	}
	if c.DuplicateWindow == 0 && c.Mirror == nil && len(c.Sources) == 0 {
		c.DuplicateWindow = int64(jetlog.DefaultDuplicateWindow)
		if c.MaxAge > 0 && c.MaxAge < c.DuplicateWindow {
			c.DuplicateWindow = c.MaxAge
		}
	}
	if c.MaxAge > 0 && c.DuplicateWindow > c.MaxAge {
		return errStreamConfig("duplicates window can not be larger then max age")
	}
	switch {
	case c.SubjectDeleteMarkerTTL < 0:
		return errStreamConfig("subject delete marker TTL must not be negative")
	case c.SubjectDeleteMarkerTTL > 0 && c.SubjectDeleteMarkerTTL < int64(time.Second):
		return errStreamConfig("subject delete marker TTL must be at least 1 second")
	case c.SubjectDeleteMarkerTTL > 0:
		// Markers need TTLs (their own) and roll-ups, as in the
		// reference (outside its pedantic mode).
		c.AllowMsgTTL = true
		c.AllowRollup, c.DenyPurge = true, false
	}
	if e := c.checkScheduleConfig(); e != nil {
		return e
	}
	if e := c.checkCounterConfig(); e != nil {
		return e
	}
	if len(c.ConsumerLimits) == 0 {
		c.ConsumerLimits = json.RawMessage("{}")
	}
	if c.DiscardNewPerSubject {
		if c.Discard != jetlog.DiscardNew {
			return errStreamConfig("discard new per subject requires discard new policy to be set")
		}
		if c.MaxMsgsPerSubject <= 0 {
			return errStreamConfig("discard new per subject requires max msgs per subject > 0")
		}
	}
	if e := c.checkTransforms(); e != nil {
		return e
	}
	if e := c.checkSourcing(); e != nil {
		return e
	}
	if e := c.checkMirrorPublish(); e != nil {
		return e
	}
	if e := c.checkScheduleSourcing(); e != nil {
		return e
	}
	if c.Mirror != nil && c.FirstSeq > 0 {
		return newAPIError(400, 10143, "stream mirrors can not have first sequence configured")
	}
	if err := c.logConfig().Normalized().Validate(); err != nil {
		return errStreamConfig("%v", err)
	}
	return nil
}

// Limits on a stream's config, as the reference's where it has them.
const (
	maxDescription    = 4 << 10   // bytes
	maxMetadata       = 128 << 10 // bytes of keys and values
	maxStreamSubjects = 100_000   // bus's own: a bound on one request's work
	minSyncInterval   = time.Millisecond
	maxSyncInterval   = 10 * time.Minute
)

func metadataSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += len(k) + len(v)
	}
	return n
}

// checkReservedSubject refuses a stream subject that would capture the
// server's own traffic (the JetStream API, the system account), unless
// the stream never acks (no_ack), as the reference does.
func checkReservedSubject(s string, noAck bool) *apiError {
	if noAck {
		return nil
	}
	if s == ">" {
		return errStreamConfig("capturing all subjects requires no-ack to be true")
	}
	for _, ns := range []string{"$JS.>", "$JSC.>", "$NRG.>"} {
		if subjects.Overlap(s, ns) && !subjects.Within(s, "$JS.EVENT.>") {
			return errStreamConfig("subjects that overlap with jetstream api require no-ack to be true")
		}
	}
	if subjects.Overlap(s, "$SYS.>") && !subjects.Within(s, "$SYS.ACCOUNT.>") {
		return errStreamConfig("subjects that overlap with system api require no-ack to be true")
	}
	return nil
}

// selfOverlap finds two of a stream's own subjects that overlap, the
// earlier first, with a trie walk per subject rather than a comparison
// per pair.
func selfOverlap(list []string) (string, string, bool) {
	t := subjects.NewTrie[int]()
	for j, s := range list {
		first := -1
		t.Overlapping(s, func(i int) bool {
			if first < 0 || i < first {
				first = i
			}
			return true
		})
		if first >= 0 {
			return list[first], s, true
		}
		if err := t.Insert(s, "", j); err != nil {
			return s, s, true // invalid subjects were refused before
		}
	}
	return "", "", false
}

// normalizePersistMode checks persist_mode as the reference does and
// maps "async" onto bus's own durability: "interval", with the stream's
// or the server's sync interval. "default" is the reference's zero value,
// which it does not echo.
func (c *streamConfig) normalizePersistMode() *apiError {
	switch c.PersistMode {
	case "", "default":
		c.PersistMode = ""
		return nil
	case "async":
	default:
		return errInvalidJSON(fmt.Errorf("can not unmarshal %q", c.PersistMode))
	}
	switch {
	case c.Storage != jetlog.StorageFile:
		return errStreamConfig("async persist mode is only supported on file storage")
	case c.Replicas > 1:
		return errStreamConfig("async persist mode is not supported on replicated streams")
	case c.AllowAtomic:
		return errStreamConfig("async persist mode is not supported with atomic batch publish")
	case c.Durability == jetlog.DurabilityAlways:
		return errStreamConfig(`async persist mode acks before the fsync: it can not have "x_bus_durability":"always"`)
	case c.Durability == "":
		c.Durability = jetlog.DurabilityInterval
	}
	return nil
}
