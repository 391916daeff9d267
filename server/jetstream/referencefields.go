package jetstream

import (
	"fmt"
	"sort"
	"strings"
)

// The JSON fields the reference knows in a stream and a consumer config
// (nats-server 2.15.2; pinned by referencefields_test.go). The reference
// decodes API requests strictly, so a field outside these (and bus's own
// x_bus_ ones) is refused as it refuses it; a field it knows and bus does
// not model is kept and echoed, because clients re-send what they read.
var (
	referenceStreamFields = fieldSet("name description subjects retention max_consumers max_msgs max_bytes max_age " +
		"max_msgs_per_subject max_msg_size discard storage num_replicas no_ack duplicate_window placement mirror " +
		"sources compression first_seq subject_transform republish allow_direct mirror_direct discard_new_per_subject " +
		"sealed deny_delete deny_purge allow_rollup_hdrs consumer_limits allow_msg_ttl subject_delete_marker_ttl " +
		"allow_msg_counter allow_atomic allow_msg_schedules persist_mode allow_batched metadata")
	referenceConsumerFields = fieldSet("durable_name name description deliver_policy opt_start_seq opt_start_time " +
		"ack_policy ack_wait max_deliver backoff filter_subject filter_subjects replay_policy rate_limit_bps sample_freq " +
		"max_waiting max_ack_pending flow_control headers_only max_batch max_expires max_bytes deliver_subject " +
		"deliver_group idle_heartbeat inactive_threshold num_replicas mem_storage direct sourcing metadata pause_until " +
		"priority_groups priority_policy priority_timeout")
)

func fieldSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, f := range strings.Fields(list) {
		set[f] = true
	}
	return set
}

// unknownField returns the reference's error for the first field of
// extra (fields bus does not model) that the reference does not know
// either, or nil.
func unknownField[V any](extra map[string]V, known map[string]bool) *apiError {
	var unknown []string
	for k := range extra {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return errInvalidJSON(fmt.Errorf("json: unknown field %q", unknown[0]))
}
