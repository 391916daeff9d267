package jetstream

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/snapshot"
)

// verifySnapshot reads the whole snapshot once with snapshot.Read's
// checks, and that each consumer's config is one. Nothing is created
// before it passes.
func verifySnapshot(sp spool) error {
	return readSnapshot(sp, func(snapshot.Header) error { return nil }, func(snapshot.Msg) error { return nil }, func(snapshot.Consumer, consumerConfig) error { return nil })
}

// readSnapshot decodes the spooled snapshot, handing each part over. An
// increment is refused: only `bus restore` joins it to its full backup.
func readSnapshot(sp spool, onHeader func(snapshot.Header) error, onMsg func(snapshot.Msg) error, onConsumer func(snapshot.Consumer, consumerConfig) error) error {
	f, err := sp.open()
	if err != nil {
		return err
	}
	defer f.Close()
	return snapshot.Read(f, snapshot.Visitor{
		Header: func(h snapshot.Header) error {
			if h.AfterSeq != 0 {
				return fmt.Errorf("snapshot is an increment (messages after seq %d): restore it after its full backup with bus restore", h.AfterSeq)
			}
			return onHeader(h)
		},
		Msg: onMsg,
		Consumer: func(c snapshot.Consumer) error {
			var cfg consumerConfig
			if err := json.Unmarshal(c.Config, &cfg); err != nil {
				return fmt.Errorf("snapshot is damaged: consumer %q config: %w", c.Name, err)
			}
			return onConsumer(c, cfg)
		},
	})
}

// restoreBatch is how many messages one append of a restore carries.
const restoreBatch = 256

// buildStream writes the snapshot's stream into dir, aside from the
// store: the messages with their seqs (gaps kept) and times, then the
// durable consumers with their state, all owned by cfg's owner.
//
// The log builds on deferred syncs and the finished tree is synced in one
// pass (restoresync.go): it becomes visible only by the rename after this.
func buildStream(sh *shared, cfg streamConfig, sp spool, dir string) error {
	opts := sh.buildOptions()
	l, err := jetlog.Open(dir, cfg.logConfig(), opts)
	if err != nil {
		return err
	}
	err = fillLog(l, cfg, sp)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return syncTree(baseFS(sh.fs), dir)
}

// fillLog appends the snapshot's messages to l and restores its consumers.
func fillLog(l *jetlog.Log, cfg streamConfig, sp spool) error {
	consumers, err := fillFromSnapshot(l, sp)
	if err != nil {
		return err
	}
	for _, c := range consumers {
		if err := restoreConsumer(l, cfg, c.Consumer, c.cfg); err != nil {
			return fmt.Errorf("consumer %q: %w", c.Name, err)
		}
	}
	return nil
}

// restoredConsumer is a consumer of a snapshot with its decoded config.
type restoredConsumer struct {
	snapshot.Consumer
	cfg consumerConfig
}

// fillFromSnapshot appends the snapshot's messages to the empty log l and
// returns its consumers.
func fillFromSnapshot(l *jetlog.Log, sp spool) ([]restoredConsumer, error) {
	expect := jetlog.Expect{NoDedup: true, KeepTime: true}
	var batch []jetlog.Msg
	next := max(l.State().LastSeq+1, 1) // the seq the log gives the next append
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := l.AppendBatch(batch, expect)
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
	var consumers []restoredConsumer
	err := readSnapshot(sp,
		func(h snapshot.Header) error { last = h.LastSeq; return skipTo(h.FirstSeq) },
		func(m snapshot.Msg) error {
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
		func(c snapshot.Consumer, ccfg consumerConfig) error {
			consumers = append(consumers, restoredConsumer{c, ccfg})
			return nil
		})
	if err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return consumers, skipTo(last + 1)
}

// restoreConsumer stores one durable consumer with its state, owned by
// the restorer (the stream's new owner).
func restoreConsumer(l *jetlog.Log, scfg streamConfig, c snapshot.Consumer, cfg consumerConfig) error {
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
	err = jc.Apply(func(s *jetlog.ConsumerState) error {
		restoreState(s, c)
		return nil
	})
	if cerr := jc.Close(); err == nil {
		err = cerr
	}
	return err
}

// restoreState sets s to the snapshot consumer's delivery state.
func restoreState(s *jetlog.ConsumerState, c snapshot.Consumer) {
	pending := make([]jetlog.Pending, len(c.Pending))
	for i, p := range c.Pending {
		pending[i] = jetlog.Pending{Stream: p.Stream, Consumer: p.Consumer, Deliveries: p.Deliveries, Deadline: p.Deadline}
	}
	s.Restore(jetlog.SeqPair{Consumer: c.Delivered.Consumer, Stream: c.Delivered.Stream},
		jetlog.SeqPair{Consumer: c.AckFloor.Consumer, Stream: c.AckFloor.Stream}, pending)
}
