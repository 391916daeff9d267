package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The MQTT listener's JetStream, per account: the streams the reference
// keeps MQTT state in, created on first need with its configs, and the
// JetStream API requests the listener makes, all through localRequestIn
// in the account's subject space, so they meet the same handlers as a
// client's (and NATS tools see the same streams: `nats stream ls`).
//
//	$MQTT_msgs  subjects $MQTT.msgs.>  file, interest  QoS 1 messages, one
//	            durable consumer per QoS 1 subscription of a session
//	$MQTT_sess  subjects $MQTT.sess.>  file, limits, max_msgs_per_subject 1
//	            one record per session, at $MQTT.sess.<client id hash>
//
// Names, subjects and configs are the reference's (nats-server 2.15.2),
// so a store written by one reads in the other.

// The reference's stream names and subject prefixes (a wire format).
const (
	mqttMsgsStream    = "$MQTT_msgs"
	mqttMsgsPrefix    = "$MQTT.msgs."
	mqttSessStream    = "$MQTT_sess"
	mqttSessPrefix    = "$MQTT.sess."
	mqttDeliverPrefix = "$MQTT.sub."
	// mqttJSAPrefix is where the listener's JetStream replies come (the
	// reference's prefix): a '$' subject, which MQTT filters starting
	// with a wildcard do not match ([MQTT-4.7.2-1]) and no MQTT topic
	// maps into.
	mqttJSAPrefix       = "$MQTT.JSA."
	mqttPubHeader       = "Nmqtt-Pub"
	mqttQoS1Header      = "NATS/1.0\r\n" + mqttPubHeader + ":1\r\n\r\n"
	mqttQoS2Header      = "NATS/1.0\r\n" + mqttPubHeader + ":2\r\n\r\n"
	jsErrStreamNotFound = 10059
	jsErrNoMessage      = 10037
	jsErrConsumerGone   = 10014
	jsErrStreamExists   = 10058
	jsErrDeleteFailed   = 10057 // "no message found" for one deleted already
)

// errMQTTNoJetStream is a request for what needs JetStream (a QoS 1
// subscription, a persistent session) in an account without it.
var errMQTTNoJetStream = errors.New("mqtt: JetStream is not enabled for the account")

// mqttJS is one account's MQTT storage. Safe for concurrent use.
type mqttJS struct {
	s       *Server
	acc     *account
	timeout time.Duration // each request's bound (js_api_timeout)

	// setup is held across the requests that create the streams, so two
	// connections do not create them at once; nothing else takes it.
	setup sync.Mutex
	ready bool // the streams exist; guarded by setup

	mu sync.Mutex // guards the fields below; taken alone
	// sessions are the account's persistent sessions known since start,
	// by client id: their state outlives the connection.
	sessions map[string]*mqttStored
}

// mqttJSFor is acc's MQTT storage, made on first use.
func (m *mqttState) mqttJSFor(s *Server, acc *account) *mqttJS {
	m.mu.Lock()
	defer m.mu.Unlock()
	if j := m.js[acc]; j != nil {
		return j
	}
	if m.js == nil {
		m.js = map[*account]*mqttJS{}
	}
	j := &mqttJS{s: s, acc: acc, timeout: s.opts.MQTT.jsAPITimeout(), sessions: map[string]*mqttStored{}}
	m.js[acc] = j
	return j
}

// mqttHasJetStream says acc has JetStream: the global account the
// server's (Options.JetStream), another its own (accountjs.go).
func (s *Server) mqttHasJetStream(acc *account) bool {
	if acc == s.global {
		return s.js != nil
	}
	return acc.js.Load() != nil
}

// jsAPIError is a JetStream API error reply.
type jsAPIError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

func (e *jsAPIError) Error() string {
	return fmt.Sprintf("%s (%d)", e.Description, e.ErrCode)
}

// jsErrIs says err is the JetStream API error with errCode.
func jsErrIs(err error, errCode int) bool {
	var e *jsAPIError
	return errors.As(err, &e) && e.ErrCode == errCode
}

// request sends a JetStream API request (body marshalled unless it is
// already bytes) and decodes the reply into resp, whose error field
// becomes the returned error.
func (j *mqttJS) request(subject string, hdr []byte, body any, resp any) error {
	if !j.s.mqttHasJetStream(j.acc) {
		return errMQTTNoJetStream
	}
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.timeout)
	defer cancel()
	r, err := j.s.localRequestVia(ctx, j.acc, fullRights, subject, mqttJSAPrefix, hdr, raw)
	if err != nil {
		return fmt.Errorf("mqtt: %s: %w", subject, err)
	}
	var e struct {
		Error *jsAPIError `json:"error"`
	}
	if err := json.Unmarshal(r.Data, &e); err != nil {
		return fmt.Errorf("mqtt: %s: bad reply %q: %w", subject, r.Data, err)
	}
	if e.Error != nil {
		return fmt.Errorf("mqtt: %s: %w", subject, e.Error)
	}
	if resp != nil {
		return json.Unmarshal(r.Data, resp)
	}
	return nil
}

// mqttStreamConfig is the part of a stream config the listener sets.
type mqttStreamConfig struct {
	Name       string   `json:"name"`
	Subjects   []string `json:"subjects"`
	Storage    string   `json:"storage"`
	Retention  string   `json:"retention"`
	MaxMsgsPer int64    `json:"max_msgs_per_subject,omitempty"`
	Replicas   int      `json:"num_replicas"`
}

// mqttStreams are the reference's configs for the streams bus uses.
var mqttStreams = []mqttStreamConfig{
	{Name: mqttSessStream, Subjects: []string{mqttSessPrefix + ">"}, Storage: "file", Retention: "limits", MaxMsgsPer: 1, Replicas: 1},
	{Name: mqttMsgsStream, Subjects: []string{mqttMsgsPrefix + ">"}, Storage: "file", Retention: "interest", Replicas: 1},
}

// ensureStreams creates the streams that do not exist yet, once.
func (j *mqttJS) ensureStreams() error {
	j.setup.Lock()
	defer j.setup.Unlock()
	if j.ready {
		return nil
	}
	for _, cfg := range mqttStreams {
		err := j.request("$JS.API.STREAM.INFO."+cfg.Name, nil, nil, nil)
		if jsErrIs(err, jsErrStreamNotFound) {
			err = j.request("$JS.API.STREAM.CREATE."+cfg.Name, nil, cfg, nil)
			if jsErrIs(err, jsErrStreamExists) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("mqtt: stream %s: %w", cfg.Name, err)
		}
	}
	j.ready = true
	return nil
}

// jsPubAck is a stored message's acknowledgement.
type jsPubAck struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
}

// store puts a message into a stream through its capture and returns
// the sequence once it is stored (fsynced).
func (j *mqttJS) store(subject string, hdr, payload []byte) (uint64, error) {
	var ack jsPubAck
	if err := j.request(subject, hdr, payload, &ack); err != nil {
		return 0, err
	}
	return ack.Seq, nil
}

// jsStoredMsg is STREAM.MSG.GET's message.
type jsStoredMsg struct {
	Subject string `json:"subject"`
	Seq     uint64 `json:"seq"`
	Data    []byte `json:"data"`
}

// lastFor is the last message on subject in stream; ok is false when
// there is none (or no stream).
func (j *mqttJS) lastFor(stream, subject string) (msg jsStoredMsg, ok bool, err error) {
	var resp struct {
		Message jsStoredMsg `json:"message"`
	}
	err = j.request("$JS.API.STREAM.MSG.GET."+stream, nil, map[string]string{"last_by_subj": subject}, &resp)
	if jsErrIs(err, jsErrNoMessage) || jsErrIs(err, jsErrStreamNotFound) {
		return jsStoredMsg{}, false, nil
	}
	return resp.Message, err == nil, err
}

// deleteMsg removes one message of stream (one already gone is no error).
func (j *mqttJS) deleteMsg(stream string, seq uint64) error {
	err := j.request("$JS.API.STREAM.MSG.DELETE."+stream, nil, map[string]any{"seq": seq, "no_erase": true}, nil)
	var e *jsAPIError
	if jsErrIs(err, jsErrNoMessage) || jsErrIs(err, jsErrStreamNotFound) ||
		errors.As(err, &e) && e.ErrCode == jsErrDeleteFailed && e.Description == "no message found" {
		return nil // removed already (by the close of the connection before)
	}
	return err
}

// mqttConsumerConfig is a QoS 1 subscription's consumer, as the
// reference configures it and keeps it in the session record (the JSON
// is JetStream's consumer config).
type mqttConsumerConfig struct {
	Durable           string `json:"durable_name"`
	DeliverSubject    string `json:"deliver_subject"`
	DeliverPolicy     string `json:"deliver_policy"`
	AckPolicy         string `json:"ack_policy"`
	AckWait           int64  `json:"ack_wait"`
	MaxAckPending     int    `json:"max_ack_pending"`
	FilterSubject     string `json:"filter_subject"`
	MemoryStorage     bool   `json:"mem_storage,omitempty"`
	InactiveThreshold int64  `json:"inactive_threshold,omitempty"`
}

// createConsumer creates (or, with the same config, finds) a durable on
// $MQTT_msgs.
func (j *mqttJS) createConsumer(cc *mqttConsumerConfig) error {
	req := struct {
		Stream string              `json:"stream_name"`
		Config *mqttConsumerConfig `json:"config"`
	}{mqttMsgsStream, cc}
	return j.request("$JS.API.CONSUMER.DURABLE.CREATE."+mqttMsgsStream+"."+cc.Durable, nil, req, nil)
}

// deleteConsumer removes a durable of $MQTT_msgs (one gone is no error).
func (j *mqttJS) deleteConsumer(durable string) error {
	err := j.request("$JS.API.CONSUMER.DELETE."+mqttMsgsStream+"."+durable, nil, nil, nil)
	if jsErrIs(err, jsErrConsumerGone) || jsErrIs(err, jsErrStreamNotFound) {
		return nil
	}
	return err
}

// mqttHash is the reference's 8-character hash of a client id (its
// session record's subject token and its consumers' name prefix).
func mqttHash(s string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	sum := sha256.Sum256([]byte(s))
	var b [8]byte
	for i := range b {
		b[i] = digits[int(sum[i]%62)]
	}
	return string(b[:])
}

// mqttToken is a random subject token (a durable's suffix, a deliver
// subject).
func mqttToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	n := uint64(0)
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return strconv.FormatUint(n, 36)
}
