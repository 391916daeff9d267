package client_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/client"
)

// jobsConfig is a worker on stream JOBS with a DLQ stream, and back-offs
// short enough for tests.
func jobsConfig(consumer string) client.WorkerConfig {
	return client.WorkerConfig{
		Stream:            "JOBS",
		Subjects:          []string{"jobs.>"},
		Consumer:          consumer,
		AckWait:           2 * time.Second,
		FetchWait:         time.Second,
		Retry:             client.RetryPolicy{MaxAttempts: 3, InitialDelay: 20 * time.Millisecond, Jitter: 0.5},
		DeadLetterSubject: "dlq.jobs",
		DeadLetterStream:  "DLQ",
	}
}

func startWorker[T any](t *testing.T, c *client.Conn, cfg client.WorkerConfig, h client.Handler[T]) *client.Worker[T] {
	t.Helper()
	w, err := client.NewWorker(c, cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	shutdownWorker(t, w)
	return w
}

func produce(t *testing.T, c *client.Conn, subject string, o order) client.PubAck {
	t.Helper()
	p, err := client.NewProducer(c, client.ProducerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ack, err := client.Produce(testContext(t), p, subject, o, client.WithID(o.ID))
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

// deadLetter waits for the first message of the DLQ stream.
func deadLetter(t *testing.T, c *client.Conn) *jetstream.RawStreamMsg {
	t.Helper()
	ctx := testContext(t)
	var msg *jetstream.RawStreamMsg
	eventually(t, 5*time.Second, func() bool {
		st, err := c.JetStream().Stream(ctx, "DLQ")
		if err != nil {
			return false
		}
		msg, err = st.GetMsg(ctx, 1)
		return err == nil
	})
	return msg
}

// settled reports whether a consumer has nothing pending or unacked.
func settled(t *testing.T, c *client.Conn, consumer string) bool {
	t.Helper()
	cons, err := c.JetStream().Consumer(testContext(t), "JOBS", consumer)
	if err != nil {
		return false
	}
	info, err := cons.Info(testContext(t))
	return err == nil && info.NumPending == 0 && info.NumAckPending == 0
}

func TestWorkerKilledMidMessageIsRedeliveredToAnother(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		cfg := jobsConfig("charge")
		cfg.AckWait = 500 * time.Millisecond
		doomed := connect(t, url, client.Options{})
		started := make(chan string, 1)
		release := make(chan struct{})
		startWorker(t, doomed, cfg, func(ctx context.Context, ev client.Event[order]) error {
			started <- ev.ID
			<-release
			return nil
		})
		c := connect(t, url, client.Options{})
		produce(t, c, "jobs.charge", order{ID: "o-1"})
		if id := receive(t, started, 5*time.Second); id != "o-1" {
			t.Fatalf("first worker got %q", id)
		}
		doomed.NATS().Close() // the process dies mid-message: no ack, no heartbeat
		defer close(release)

		done := make(chan string, 1)
		startWorker(t, c, cfg, func(ctx context.Context, ev client.Event[order]) error {
			done <- ev.ID
			return nil
		})
		if id := receive(t, done, 5*time.Second); id != "o-1" {
			t.Fatalf("second worker got %q, want o-1", id)
		}
		eventually(t, 5*time.Second, func() bool { return settled(t, c, "charge") })
	})
}

func TestWorkerPoisonMessageGoesToDeadLettersAfterOneAttempt(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		var attempts atomic.Int32
		startWorker(t, c, jobsConfig("charge"), func(ctx context.Context, ev client.Event[order]) error {
			attempts.Add(1)
			return client.Permanent(errors.New("card number\nmalformed"))
		})
		ack := produce(t, c, "jobs.charge", order{ID: "o-7", Total: 9})
		dl := deadLetter(t, c)
		for h, want := range map[string]string{
			client.HeaderDLQReason:     "terminated: card number malformed",
			client.HeaderDLQDeliveries: "1",
			client.HeaderDLQStream:     "JOBS",
			client.HeaderDLQConsumer:   "charge",
			client.HeaderDLQSubject:    "jobs.charge",
			client.HeaderDLQSequence:   strconv.FormatUint(ack.Seq, 10),
			client.HeaderID:            "o-7",
		} {
			if got := dl.Header.Get(h); got != want {
				t.Errorf("dead letter header %s = %q, want %q", h, got, want)
			}
		}
		var o order
		if err := (client.MsgPack{}).Unmarshal(dl.Data, &o); err != nil || o.Total != 9 {
			t.Errorf("dead letter payload %+v, %v", o, err)
		}
		eventually(t, 5*time.Second, func() bool { return settled(t, c, "charge") })
		if n := attempts.Load(); n != 1 {
			t.Fatalf("handler ran %d times, want 1", n)
		}
	})
}

func TestWorkerMaxAttemptsGoToDeadLetters(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		var attempts atomic.Int32
		startWorker(t, c, jobsConfig("email"), func(ctx context.Context, ev client.Event[order]) error {
			attempts.Add(1)
			return errors.New("smtp down")
		})
		produce(t, c, "jobs.email", order{ID: "o-8"})
		dl := deadLetter(t, c)
		if r, d := dl.Header.Get(client.HeaderDLQReason), dl.Header.Get(client.HeaderDLQDeliveries); r != "max_deliveries" || d != "3" {
			t.Fatalf("dead letter reason %q after %q deliveries, want max_deliveries after 3", r, d)
		}
		if n := attempts.Load(); n != 3 {
			t.Fatalf("handler ran %d times, want 3", n)
		}
	})
}

func TestWorkerRetriesFlakyHandlerWithJitteredBackOff(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		cfg := jobsConfig("inventory")
		cfg.Retry = client.RetryPolicy{MaxAttempts: 5, InitialDelay: 80 * time.Millisecond, Multiplier: 2, Jitter: 0.5}
		var mu sync.Mutex
		var starts, ends []time.Time
		done := make(chan struct{})
		startWorker(t, c, cfg, func(ctx context.Context, ev client.Event[order]) error {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, time.Now())
			defer func() { ends = append(ends, time.Now()) }()
			if len(starts) <= 3 {
				return errors.New("warehouse busy")
			}
			close(done)
			return nil
		})
		produce(t, c, "jobs.inventory", order{ID: "o-9"})
		receive(t, done, 5*time.Second)
		eventually(t, 5*time.Second, func() bool { return settled(t, c, "inventory") })
		mu.Lock()
		defer mu.Unlock()
		policy := cfg.Retry.WithDefaults()
		const slack = 150 * time.Millisecond // a pull's round trip and timer precision
		for i := 1; i < len(starts); i++ {
			gap := starts[i].Sub(ends[i-1])
			base := policy.Base(i)
			lo, hi := time.Duration(float64(base)*(1-policy.Jitter)), time.Duration(float64(base)*(1+policy.Jitter))
			if gap < lo || gap > hi+slack {
				t.Errorf("retry %d came %v after the failure, outside [%v, %v+%v]", i, gap, lo, hi, slack)
			}
		}
		if len(starts) != 4 {
			t.Fatalf("handler ran %d times, want 4", len(starts))
		}
	})
}

func TestWorkerHeartbeatsKeepLongHandlerMessage(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		c := connect(t, url, client.Options{})
		cfg := jobsConfig("report")
		cfg.AckWait = 300 * time.Millisecond
		var attempts atomic.Int32
		done := make(chan struct{})
		h := func(ctx context.Context, ev client.Event[order]) error {
			if attempts.Add(1) > 1 {
				return nil
			}
			time.Sleep(4 * cfg.AckWait) // the long work this test measures
			close(done)
			return nil
		}
		startWorker(t, c, cfg, h)
		startWorker(t, connect(t, url, client.Options{}), cfg, h) // would take a redelivery
		produce(t, c, "jobs.report", order{ID: "o-10"})
		receive(t, done, 5*time.Second)
		eventually(t, 5*time.Second, func() bool { return settled(t, c, "report") })
		if n := attempts.Load(); n != 1 {
			t.Fatalf("handler ran %d times: the message was redelivered during the work", n)
		}
	})
}

func TestWorkerShutdownHandsBackUnfinishedWork(t *testing.T) {
	t.Parallel()
	onEachServer(t, func(t *testing.T, url string) {
		cfg := jobsConfig("analytics")
		cfg.AckWait = 30 * time.Second // far beyond the test: only a NAK brings it back in time
		first := connect(t, url, client.Options{})
		started := make(chan struct{}, 1)
		w, err := client.NewWorker(first, cfg, func(ctx context.Context, ev client.Event[order]) error {
			started <- struct{}{}
			<-ctx.Done() // a handler that honours cancellation
			return ctx.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(testContext(t)); err != nil {
			t.Fatal(err)
		}
		c := connect(t, url, client.Options{})
		produce(t, c, "jobs.analytics", order{ID: "o-11"})
		receive(t, started, 5*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if err := w.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("shutdown past its deadline returned %v", err)
		}
		got := make(chan string, 1)
		startWorker(t, c, cfg, func(ctx context.Context, ev client.Event[order]) error {
			got <- ev.ID
			return nil
		})
		if id := receive(t, got, 5*time.Second); id != "o-11" {
			t.Fatalf("got %q", id)
		}
	})
}

func TestWorkerShutdownWaitsForRunningHandlers(t *testing.T) {
	t.Parallel()
	url := startBus(t)
	c := connect(t, url, client.Options{})
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	w, err := client.NewWorker(c, jobsConfig("receipt"), func(ctx context.Context, ev client.Event[order]) error {
		close(started)
		<-release
		finished.Store(true)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	produce(t, c, "jobs.receipt", order{ID: "o-12"})
	receive(t, started, 5*time.Second)
	stopped := make(chan error, 1)
	go func() { stopped <- w.Shutdown(testContext(t)) }()
	select {
	case err := <-stopped:
		t.Fatalf("shutdown returned %v while a handler ran", err)
	case <-time.After(50 * time.Millisecond): // a delay this test measures
	}
	close(release)
	if err := receive(t, stopped, 5*time.Second); err != nil || !finished.Load() {
		t.Fatalf("shutdown: %v, handler finished: %v", err, finished.Load())
	}
	eventually(t, 5*time.Second, func() bool { return settled(t, c, "receipt") })
}

func TestWorkerBoundsConcurrency(t *testing.T) {
	t.Parallel()
	url := startBus(t)
	c := connect(t, url, client.Options{})
	cfg := jobsConfig("pool")
	cfg.Concurrency = 3
	var running, peak, total atomic.Int32
	gate := make(chan struct{})
	startWorker(t, c, cfg, func(ctx context.Context, ev client.Event[order]) error {
		n := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-gate
		total.Add(1)
		return nil
	})
	for i := range 10 {
		produce(t, c, "jobs.pool", order{ID: "o-" + strconv.Itoa(i)})
	}
	eventually(t, 5*time.Second, func() bool { return running.Load() == 3 })
	close(gate)
	eventually(t, 5*time.Second, func() bool { return total.Load() == 10 })
	if p := peak.Load(); p != 3 {
		t.Fatalf("peak concurrency %d, want 3", p)
	}
}

func TestNewWorkerRejectsBadConfig(t *testing.T) {
	t.Parallel()
	c := connect(t, startBus(t), client.Options{})
	h := func(context.Context, client.Event[order]) error { return nil }
	for name, cfg := range map[string]client.WorkerConfig{
		"no stream":             {Consumer: "c"},
		"no consumer":           {Stream: "S"},
		"dlq stream no subject": {Stream: "S", Consumer: "c", DeadLetterStream: "D"},
		"jitter above one":      {Stream: "S", Consumer: "c", Retry: client.RetryPolicy{Jitter: 2}},
	} {
		if _, err := client.NewWorker(c, cfg, h); !errors.Is(err, client.ErrBadConfig) {
			t.Errorf("%s: got %v, want ErrBadConfig", name, err)
		}
	}
}
