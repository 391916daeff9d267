package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lossyPublisher stores every message like a stream with a duplicate
// window, but loses the acks of the first few publishes: the situation a
// retry with the same Nats-Msg-Id exists for.
type lossyPublisher struct {
	mu       sync.Mutex
	lostAcks int
	ids      map[string]uint64
	calls    []time.Time
	err      error // returned instead of storing, when set
}

func (p *lossyPublisher) PublishMsg(ctx context.Context, msg *nats.Msg, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, time.Now())
	if p.err != nil {
		return nil, p.err
	}
	id := msg.Header.Get(HeaderMsgID)
	seq, dup := p.ids[id]
	if !dup {
		seq = uint64(len(p.ids) + 1)
		p.ids[id] = seq
	}
	if p.lostAcks > 0 {
		p.lostAcks--
		return nil, context.DeadlineExceeded
	}
	return &jetstream.PubAck{Stream: "S", Sequence: seq, Duplicate: dup}, nil
}

func TestProduceRetriesLostAcks(t *testing.T) {
	t.Parallel()
	c := testConn(t)
	pub := &lossyPublisher{lostAcks: 2, ids: map[string]uint64{}}
	retry := RetryPolicy{MaxAttempts: 4, InitialDelay: 20 * time.Millisecond, Jitter: 0.5}
	p, err := NewProducer(c, ProducerOptions{Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	p.pub = pub
	ack, err := Produce(context.Background(), p, "s", payload{N: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ack.Attempts != 3 || !ack.Duplicate || ack.Seq != 1 || len(pub.ids) != 1 {
		t.Fatalf("ack %+v, stored %d ids: want 3 attempts, reported as duplicate, stored once", ack, len(pub.ids))
	}
	policy := p.opts.Retry
	for i := 1; i < len(pub.calls); i++ {
		gap := pub.calls[i].Sub(pub.calls[i-1])
		if lo := time.Duration(float64(policy.Base(i)) * (1 - policy.Jitter)); gap < lo {
			t.Errorf("gap %d = %v, below the jitter floor %v", i, gap, lo)
		}
	}
}

func TestProduceStopsOnPermanentErrors(t *testing.T) {
	t.Parallel()
	c := testConn(t)
	refused := errors.New("maximum messages exceeded")
	pub := &lossyPublisher{ids: map[string]uint64{}, err: refused}
	p, _ := NewProducer(c, ProducerOptions{Retry: RetryPolicy{InitialDelay: time.Millisecond}})
	p.pub = pub
	if _, err := Produce(context.Background(), p, "s", payload{}); !errors.Is(err, refused) || len(pub.calls) != 1 {
		t.Fatalf("got %v after %d calls, want the refusal after 1", err, len(pub.calls))
	}
	pub.err = nats.ErrTimeout
	pub.calls = nil
	if _, err := Produce(context.Background(), p, "s", payload{}); !errors.Is(err, nats.ErrTimeout) || len(pub.calls) != 5 {
		t.Fatalf("got %v after %d calls, want a timeout after 5", err, len(pub.calls))
	}
}
