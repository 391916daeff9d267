package snapshot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/bus-dev/bus/subjects"
)

// Visitor receives the parts of a snapshot as Read checks them. A nil
// func skips that part. A Msg's slices are good only until it returns.
type Visitor struct {
	Header   func(Header) error
	Msg      func(Msg) error
	Consumer func(Consumer) error
	End      func(End) error
}

// Read decodes a whole snapshot, checking the format version, every
// record's checksum, the record order, that the messages' seqs rise
// within the header's range, that each consumer decodes, and that the
// end record's counts match what came before it, with nothing after it.
// A damaged or cut-off snapshot is an error naming what is wrong.
func Read(r io.Reader, v Visitor) error {
	sr, err := NewReader(r)
	if err != nil {
		return err
	}
	kind, body, err := sr.Next()
	if err != nil {
		return err
	}
	if kind != KindHeader {
		return errors.New("snapshot is damaged: no header")
	}
	var h Header
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("snapshot is damaged: header: %w", err)
	}
	if h.Version != Version {
		return fmt.Errorf("snapshot format version %d is not supported (this bus reads version %d)", h.Version, Version)
	}
	if h.FirstSeq == 0 || h.FirstSeq > h.LastSeq+1 || h.AfterSeq > h.LastSeq {
		return fmt.Errorf("snapshot is damaged: header seqs %d..%d after %d", h.FirstSeq, h.LastSeq, h.AfterSeq)
	}
	if v.Header != nil {
		if err := v.Header(h); err != nil {
			return err
		}
	}
	low := max(h.FirstSeq, h.AfterSeq+1)
	var msgs uint64
	var consumers int
	prev := uint64(0)
	for {
		kind, body, err := sr.Next()
		if err != nil {
			return err
		}
		switch kind {
		case KindMsg:
			m, err := DecodeMsg(body)
			if err != nil {
				return err
			}
			if m.Seq <= prev || m.Seq < low || m.Seq > h.LastSeq {
				return fmt.Errorf("snapshot is damaged: message seq %d out of order or outside %d..%d", m.Seq, low, h.LastSeq)
			}
			prev = m.Seq
			msgs++
			if v.Msg != nil {
				if err := v.Msg(m); err != nil {
					return err
				}
			}
		case KindConsumer:
			var c Consumer
			if err := json.Unmarshal(body, &c); err != nil {
				return fmt.Errorf("snapshot is damaged: consumer: %w", err)
			}
			if !subjects.ValidName(c.Name) {
				return fmt.Errorf("snapshot is damaged: consumer name %q", c.Name)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(c.Config, &obj); err != nil {
				return fmt.Errorf("snapshot is damaged: consumer %q config: %w", c.Name, err)
			}
			consumers++
			if v.Consumer != nil {
				if err := v.Consumer(c); err != nil {
					return err
				}
			}
		case KindEnd:
			var e End
			if err := json.Unmarshal(body, &e); err != nil {
				return fmt.Errorf("snapshot is damaged: end: %w", err)
			}
			if e.Messages != msgs || e.Consumers != consumers {
				return fmt.Errorf("snapshot is damaged: it ends claiming %d messages and %d consumers, it holds %d and %d", e.Messages, e.Consumers, msgs, consumers)
			}
			var one [1]byte
			if n, _ := sr.r.Read(one[:]); n > 0 {
				return errors.New("snapshot is damaged: data after its end")
			}
			if v.End != nil {
				return v.End(e)
			}
			return nil
		}
	}
}
