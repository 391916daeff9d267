package client

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Content types written in the Content-Type header, so consumers in any
// language know how to read a payload. Part of the wire format: never
// change them.
const (
	ContentTypeMsgPack = "application/msgpack"
	ContentTypeJSON    = "application/json"
)

// Codec turns event payloads into bytes and back. Implementations must be
// safe for concurrent use.
type Codec interface {
	// ContentType names the encoding, as sent in the Content-Type header.
	ContentType() string
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// MsgPack is the default codec. It reads `json` struct tags (and
// `msgpack` ones, which win), so one struct definition serves both codecs.
type MsgPack struct{}

// ContentType is ContentTypeMsgPack.
func (MsgPack) ContentType() string { return ContentTypeMsgPack }

// Marshal encodes v. The returned slice belongs to the caller.
func (MsgPack) Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(&buf)
	enc.SetCustomStructTag("json")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("client: msgpack encode %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes data into v, a pointer.
func (MsgPack) Unmarshal(data []byte, v any) error {
	dec := msgpack.GetDecoder()
	defer msgpack.PutDecoder(dec)
	dec.Reset(bytes.NewReader(data))
	dec.SetCustomStructTag("json")
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("client: msgpack decode into %T: %w", v, err)
	}
	return nil
}

// JSON encodes payloads with encoding/json.
type JSON struct{}

// ContentType is ContentTypeJSON.
func (JSON) ContentType() string { return ContentTypeJSON }

// Marshal encodes v. The returned slice belongs to the caller.
func (JSON) Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: json encode %T: %w", v, err)
	}
	return b, nil
}

// Unmarshal decodes data into v, a pointer.
func (JSON) Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("client: json decode into %T: %w", v, err)
	}
	return nil
}

// codecFor picks the codec a received message names in its Content-Type
// header; fallback (the call's or connection's codec) reads messages that
// name none, such as those from plain NATS publishers.
func codecFor(contentType string, fallback Codec) (Codec, error) {
	switch contentType {
	case "":
		return fallback, nil
	case fallback.ContentType():
		return fallback, nil
	case ContentTypeMsgPack:
		return MsgPack{}, nil
	case ContentTypeJSON:
		return JSON{}, nil
	}
	return nil, fmt.Errorf("client: content type %q: %w", contentType, ErrUnknownContentType)
}
