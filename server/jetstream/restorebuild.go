package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/subjects"
)

// verifySnapshot reads the whole snapshot once, checking the format
// version, every record's checksum, the record order, that the messages'
// seqs rise within the header's range, that each consumer decodes, and
// that the end record's counts match what came before it, with nothing
// after it. Nothing is created before it passes.
func verifySnapshot(sp spool) error {
	return readSnapshot(sp, func(snapHeader) error { return nil }, func(snapMsg) error { return nil }, func(snapConsumer, consumerConfig) error { return nil })
}

// readSnapshot decodes the spooled snapshot, handing each part over.
func readSnapshot(sp spool, onHeader func(snapHeader) error, onMsg func(snapMsg) error, onConsumer func(snapConsumer, consumerConfig) error) error {
	f, err := sp.open()
	if err != nil {
		return err
	}
	defer f.Close()
	sr, err := newSnapReader(f)
	if err != nil {
		return err
	}
	kind, body, err := sr.next()
	if err != nil {
		return err
	}
	if kind != snapKindHeader {
		return errors.New("snapshot is damaged: no header")
	}
	var h snapHeader
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("snapshot is damaged: header: %w", err)
	}
	if h.Version != snapVersion {
		return fmt.Errorf("snapshot format version %d is not supported (this bus reads version %d)", h.Version, snapVersion)
	}
	if h.FirstSeq == 0 || h.FirstSeq > h.LastSeq+1 {
		return fmt.Errorf("snapshot is damaged: header seqs %d..%d", h.FirstSeq, h.LastSeq)
	}
	if err := onHeader(h); err != nil {
		return err
	}
	var msgs uint64
	var consumers int
	prev := uint64(0)
	for {
		kind, body, err := sr.next()
		if err != nil {
			return err
		}
		switch kind {
		case snapKindMsg:
			m, err := decodeSnapMsg(body)
			if err != nil {
				return err
			}
			if m.Seq <= prev || m.Seq < h.FirstSeq || m.Seq > h.LastSeq {
				return fmt.Errorf("snapshot is damaged: message seq %d out of order or outside %d..%d", m.Seq, h.FirstSeq, h.LastSeq)
			}
			prev = m.Seq
			msgs++
			if err := onMsg(m); err != nil {
				return err
			}
		case snapKindConsumer:
			var c snapConsumer
			if err := json.Unmarshal(body, &c); err != nil {
				return fmt.Errorf("snapshot is damaged: consumer: %w", err)
			}
			var cfg consumerConfig
			if err := json.Unmarshal(c.Config, &cfg); err != nil {
				return fmt.Errorf("snapshot is damaged: consumer %q config: %w", c.Name, err)
			}
			if !subjects.ValidName(c.Name) {
				return fmt.Errorf("snapshot is damaged: consumer name %q", c.Name)
			}
			consumers++
			if err := onConsumer(c, cfg); err != nil {
				return err
			}
		case snapKindEnd:
			var e snapEnd
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
			return nil
		}
	}
}

// restoreBatch is how many messages one append of a restore carries.
const restoreBatch = 256

// buildStream writes the snapshot's stream into dir, aside from the
// store: the messages with their seqs (gaps kept) and times, then the
// durable consumers with their state, all owned by cfg's owner.
func buildStream(sh *shared, cfg streamConfig, sp spool, dir string) (err error) {
	if cfg.Storage == jetlog.StorageMemory {
		return errors.New("memory streams are not restored")
	}
	l, err := jetlog.Open(dir, cfg.logConfig(), sh.logOptions())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := l.Close(); err == nil {
			err = cerr
		}
	}()
	expect := jetlog.Expect{NoDedup: true, KeepTime: true}
	var batch []jetlog.Msg
	next := uint64(1) // the seq the log gives the next append
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := l.AppendBatchExpect(batch, expect)
		batch = batch[:0]
		return err
	}
	skipTo := func(seq uint64) error {
		if seq <= next {
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		next = seq
		return l.SkipTo(seq)
	}
	var last uint64
	var consumers []snapConsumer
	var configs []consumerConfig
	err = readSnapshot(sp,
		func(h snapHeader) error { last = h.LastSeq; return skipTo(h.FirstSeq) },
		func(m snapMsg) error {
			if err := skipTo(m.Seq); err != nil {
				return err
			}
			// The batch is stored before the reader's buffer is reused.
			batch = append(batch, jetlog.Msg{Seq: m.Seq, Time: time.Unix(0, m.Time), Subject: m.Subject,
				Header: append([]byte(nil), m.Header...), Data: append([]byte(nil), m.Data...)})
			next = m.Seq + 1
			if len(batch) == restoreBatch {
				return flush()
			}
			return nil
		},
		func(c snapConsumer, ccfg consumerConfig) error {
			consumers, configs = append(consumers, c), append(configs, ccfg)
			return nil
		})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := skipTo(last + 1); err != nil {
		return err
	}
	for i, c := range consumers {
		if err := restoreConsumer(l, cfg, c, configs[i]); err != nil {
			return fmt.Errorf("consumer %q: %w", c.Name, err)
		}
	}
	return nil
}

// restoreConsumer stores one durable consumer with its state, owned by
// the restorer (the stream's new owner).
func restoreConsumer(l *jetlog.Log, scfg streamConfig, c snapConsumer, cfg consumerConfig) error {
	cfg.owner = scfg.owner
	delete(cfg.extra, ownerField)
	raw, err := storedWithOwner(cfg, cfg.owner)
	if err != nil {
		return err
	}
	backoff := make([]time.Duration, len(cfg.BackOff))
	for i, b := range cfg.BackOff {
		backoff[i] = time.Duration(b)
	}
	jc, err := l.OpenConsumer(c.Name, jetlog.ConsumerConfig{AckWait: ledgerAckWait(cfg), Backoff: backoff, MaxAckPending: cfg.MaxAckPending, Raw: raw})
	if err != nil {
		return err
	}
	pending := make([]jetlog.Pending, len(c.Pending))
	for i, p := range c.Pending {
		pending[i] = jetlog.Pending{Stream: p.Stream, Consumer: p.Consumer, Deliveries: p.Deliveries, Deadline: p.Deadline}
	}
	err = jc.Apply(func(s *jetlog.ConsumerState) error {
		s.Restore(jetlog.SeqPair{Consumer: c.Delivered.Consumer, Stream: c.Delivered.Stream},
			jetlog.SeqPair{Consumer: c.AckFloor.Consumer, Stream: c.AckFloor.Stream}, pending)
		return nil
	})
	if cerr := jc.Close(); err == nil {
		err = cerr
	}
	return err
}
