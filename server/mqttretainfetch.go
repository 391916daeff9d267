package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Reading the retained records a subscription matches: an ephemeral
// pull consumer on $MQTT_rmsgs filtered to the subscription's subjects
// (ack none, memory state), pulled a batch at a time with no_wait until
// the stream answers 404 (nothing left), then deleted. One consumer per
// filter that the index says has matches; its records come in stream
// order, without the JSON of a message get. The consumer's inactive
// threshold removes it should the delete not reach it.

// retainedFetchBatch is how many records one pull asks for: the reader
// queues them for the client before it asks for more.
const retainedFetchBatch = 1024

// fetchedRecord is one record a fetch delivered, the fetch's to keep.
type fetchedRecord struct {
	subject string
	seq     uint64 // its stream seq, from the delivery's ack subject
	header  []byte
	data    []byte
	status  bool // a status message (404 No Messages, 408): the end
}

// fetchRetained calls each with every record in acc's $MQTT_rmsgs whose
// subject one of filters matches, until each returns false.
func (s *Server) fetchRetained(acc *account, filters []string, each func(fetchedRecord) bool) error {
	inbox := mqttJSAPrefix + inboxToken()
	// At most one batch and its closing status are in flight, so the
	// handler, on the consumer's goroutine, never waits.
	records := make(chan fetchedRecord, retainedFetchBatch+2)
	sub, err := s.subscribeIn(acc, &subscription{subject: inbox, handler: func(subject, reply []byte, hdr int, msg []byte) bool {
		r := fetchedRecord{seq: ackStreamSeq(reply)}
		if hdr >= 0 {
			r.header, msg = bytes.Clone(msg[:hdr]), msg[hdr:]
			r.status = bytes.HasPrefix(r.header, []byte("NATS/1.0 4"))
		}
		r.subject, r.data = string(subject), bytes.Clone(msg)
		select {
		case records <- r:
			return true
		default:
			return false
		}
	}})
	if err != nil {
		return err
	}
	defer s.unsubscribeIn(acc, sub)

	name := "mqtt_rmsgs_" + inboxToken()[:12]
	cfg := map[string]any{"name": name, "ack_policy": "none", "deliver_policy": "all", "replay_policy": "instant",
		"mem_storage": true, "inactive_threshold": int64(time.Minute)}
	switch {
	case slices.Contains(filters, mqttRetainedPrefix+">"):
		// The whole stream ("#"): unfiltered, so that counting what is
		// left for each batch's ack subjects does not walk every
		// subject of the stream (jetlog's NumPending with a wildcard).
	case len(filters) == 1:
		cfg["filter_subject"] = filters[0]
	default:
		cfg["filter_subjects"] = filters
	}
	create := fmt.Sprintf("$JS.API.CONSUMER.CREATE.%s.%s", mqttRetainedStream, name)
	if err := s.retainedAPI(acc, create, map[string]any{"stream_name": mqttRetainedStream, "config": cfg}, nil); err != nil {
		return fmt.Errorf("consumer for %q: %w", filters, err)
	}
	defer func() {
		if err := s.retainedAPI(acc, fmt.Sprintf("$JS.API.CONSUMER.DELETE.%s.%s", mqttRetainedStream, name), struct{}{}, nil); err != nil {
			s.log.Warn("mqtt retained fetch consumer not deleted; its inactive threshold will", "consumer", name, "err", err)
		}
	}()
	pull, err := json.Marshal(map[string]any{"batch": retainedFetchBatch, "no_wait": true})
	if err != nil {
		return err
	}
	next := fmt.Sprintf("$JS.API.CONSUMER.MSG.NEXT.%s.%s", mqttRetainedStream, name)
	core := jetstreamCore{s, acc}
	timer := time.NewTimer(mqttRetainedTimeout)
	defer timer.Stop()
	for {
		if core.Publish(next, inbox, nil, pull) == 0 {
			return fmt.Errorf("pull from %s: %w", name, errNoResponder)
		}
		for got := 0; got < retainedFetchBatch; got++ {
			timer.Reset(mqttRetainedTimeout)
			select {
			case r := <-records:
				if r.status {
					return nil
				}
				if !each(r) {
					return nil
				}
			case <-timer.C:
				return fmt.Errorf("pull from %s: no answer in %v", name, mqttRetainedTimeout)
			}
		}
	}
}

// ackStreamSeq is the stream seq in a delivery's ack subject, in either
// form: $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
// (9 tokens), or with <domain>.<account hash> after ACK (11 or more); 0
// for anything else.
func ackStreamSeq(reply []byte) uint64 {
	toks := bytes.Split(reply, []byte("."))
	i := 5
	switch {
	case len(toks) < 9 || string(toks[0]) != "$JS" || string(toks[1]) != "ACK":
		return 0
	case len(toks) > 9:
		i = 7
	}
	seq, err := strconv.ParseUint(string(toks[i]), 10, 64)
	if err != nil {
		return 0
	}
	return seq
}
