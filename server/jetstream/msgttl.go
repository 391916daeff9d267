package jetstream

import (
	"bytes"
	"strconv"
	"time"

	"github.com/bus-dev/bus/header"
	"github.com/bus-dev/bus/jetlog"
)

// checkTTL vets a publish's Nats-TTL header as the reference does: an
// unreadable value is refused (10165), a TTL on a stream without
// allow_msg_ttl too (10166). With delete markers on, a TTL shorter than
// the markers' is raised to it, so that a marker never outlives the
// message it stands for; the header block returned says so.
func (st *stream) checkTTL(hdr []byte) ([]byte, *apiError) {
	ttl, err := jetlog.ParseTTL(header.Value(hdr, "Nats-TTL"))
	if err != nil {
		return hdr, newAPIError(400, 10165, "invalid per-message TTL")
	}
	if ttl == 0 {
		return hdr, nil
	}
	st.mu.Lock()
	allowed, markerTTL, perSubject := st.cfg.AllowMsgTTL, st.cfg.SubjectDeleteMarkerTTL, st.cfg.MaxMsgsPerSubject
	st.mu.Unlock()
	if !allowed {
		return hdr, newAPIError(400, 10166, "per-message TTL is disabled")
	}
	if min := int64(time.Duration(markerTTL).Seconds()); ttl > 0 && min > 0 && perSubject != 1 && ttl < min {
		hdr = withoutHeaders(hdr, func(key []byte) bool { return bytes.EqualFold(key, []byte("Nats-TTL")) })
		hdr = withHeader(hdr, "Nats-TTL", strconv.FormatInt(min, 10))
	}
	return hdr, nil
}

// storeMarkers stores a delete marker for each subject whose last message
// aged out or expired, as the reference does with subject_delete_marker_ttl:
// an empty message with the reason, its own TTL, and a subject roll-up
// (which removes whatever the subject still holds, as the reference's
// marker would). Runs on its own goroutine (see openStream).
func (st *stream) storeMarkers(subjects []string) {
	st.mu.Lock()
	ttl := time.Duration(st.cfg.SubjectDeleteMarkerTTL).Truncate(time.Second)
	st.mu.Unlock()
	if ttl <= 0 {
		return
	}
	hdr := statusHeader("", "Nats-Marker-Reason", "MaxAge", "Nats-TTL", ttl.String(), "Nats-Rollup", "sub")
	for _, subj := range subjects {
		st.captureMsg(nil, []byte(subj), nil, len(hdr), hdr)
	}
}
