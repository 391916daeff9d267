package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Handler handles one event. Returning nil acks it. Returning an error
// retries it after the worker's back-off, unless the error is Permanent
// or the attempts are used up: then it is dead-lettered. ctx carries the
// event's traceparent and is cancelled when Shutdown's deadline passes.
type Handler[T any] func(ctx context.Context, ev Event[T]) error

// Worker consumes a stream with a durable pull consumer, running a
// Handler on up to Concurrency messages at once. Create it with
// NewWorker, run it with Start and stop it with Shutdown. Any number of
// workers, in any number of processes, may share one consumer: each
// message goes to one of them, and a message whose worker dies is
// redelivered to another after AckWait.
type Worker[T any] struct {
	c   *Conn
	cfg WorkerConfig
	h   Handler[T]

	slots chan struct{} // a send takes a handler slot, a receive frees it

	mu         sync.Mutex // guards the fields below
	started    bool
	stopping   bool
	cancelPull context.CancelFunc
	cancelWork context.CancelFunc
	inflight   map[*delivery]struct{}
	dlq        *deadLetters // nil when the server dead-letters or no DLQ is set

	pulling  sync.WaitGroup // the fetch loop
	handling sync.WaitGroup // handler goroutines
}

// NewWorker checks cfg and returns a worker that is not yet running.
func NewWorker[T any](c *Conn, cfg WorkerConfig, h Handler[T]) (*Worker[T], error) {
	cfg = cfg.withDefaults(c)
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("client: new worker %q: nil handler: %w", cfg.Consumer, ErrBadConfig)
	}
	return &Worker[T]{
		c:        c,
		cfg:      cfg,
		h:        h,
		slots:    make(chan struct{}, cfg.Concurrency),
		inflight: make(map[*delivery]struct{}),
	}, nil
}

// Start ensures the stream (when cfg.Subjects is set), the dead-letter
// stream and the consumer, subscribes to the consumer's advisories when
// the worker must forward dead letters itself, and starts fetching. ctx
// bounds only this setup. A worker starts once.
func (w *Worker[T]) Start(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return ErrStarted
	}
	w.started = true
	w.mu.Unlock()
	if err := EnsureStream(ctx, w.c, w.cfg); err != nil {
		return err
	}
	cons, serverDLQ, err := ensureConsumer(ctx, w.c, w.cfg)
	if err != nil {
		return err
	}
	var dlq *deadLetters
	if w.cfg.DeadLetterSubject != "" && !serverDLQ {
		if dlq, err = startDeadLetters(ctx, w.c, w.cfg); err != nil {
			return err
		}
	}
	pullCtx, cancelPull := context.WithCancel(context.Background())
	workCtx, cancelWork := context.WithCancel(context.Background())
	w.mu.Lock()
	w.cancelPull, w.cancelWork, w.dlq = cancelPull, cancelWork, dlq
	w.mu.Unlock()
	w.pulling.Add(1)
	go w.pull(pullCtx, workCtx, cons)
	return nil
}

// Shutdown stops fetching, waits for running handlers to finish, and
// then stops forwarding dead letters. When ctx ends first, it NAKs every
// message still being handled (so another worker gets it at once),
// cancels the handlers' context and returns ctx's error without waiting
// for them: a handler that ignores its context keeps running, and its
// result is dropped.
func (w *Worker[T]) Shutdown(ctx context.Context) error {
	w.mu.Lock()
	if !w.started || w.cancelPull == nil {
		w.mu.Unlock()
		return ErrNotStarted
	}
	w.stopping = true
	cancelPull, cancelWork, dlq := w.cancelPull, w.cancelWork, w.dlq
	w.mu.Unlock()

	cancelPull()
	w.pulling.Wait() // the loop ends as soon as its pull is cancelled
	done := make(chan struct{})
	go func() { w.handling.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		w.abandon()
	}
	cancelWork()
	if err == nil {
		<-done
	}
	if dlq != nil {
		if derr := dlq.stop(); err == nil {
			err = derr
		}
	}
	return err
}

// abandon NAKs every in-flight message without delay.
func (w *Worker[T]) abandon() {
	w.mu.Lock()
	ds := make([]*delivery, 0, len(w.inflight))
	for d := range w.inflight {
		ds = append(ds, d)
	}
	w.mu.Unlock()
	for _, d := range ds {
		if d.settle(d.msg.Nak) {
			w.cfg.Logger.Warn("client: shutdown deadline: message handed back", "stream", w.cfg.Stream, "consumer", w.cfg.Consumer)
		}
	}
}

// pull fetches as many messages as there are free slots and starts a
// handler for each, until pullCtx ends.
func (w *Worker[T]) pull(pullCtx, workCtx context.Context, cons jetstream.Consumer) {
	defer w.pulling.Done()
	for {
		select {
		case w.slots <- struct{}{}:
		case <-pullCtx.Done():
			return
		}
		n := 1
	more:
		for n < cap(w.slots) {
			select {
			case w.slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		got, err := w.fetch(pullCtx, workCtx, cons, n)
		for range n - got {
			<-w.slots
		}
		if pullCtx.Err() != nil {
			return
		}
		if err != nil {
			w.cfg.Logger.Warn("client: fetch failed", "stream", w.cfg.Stream, "consumer", w.cfg.Consumer, "err", err)
			if wait(pullCtx, w.cfg.Retry.InitialDelay) != nil {
				return
			}
		}
	}
}

// fetch pulls up to n messages and dispatches them; it returns how many
// arrived, each of which now holds a slot.
func (w *Worker[T]) fetch(pullCtx, workCtx context.Context, cons jetstream.Consumer, n int) (int, error) {
	// The pull expires shortly before the context (nats.go derives one
	// from the other), and Shutdown cancels it early.
	fetchCtx, cancel := context.WithTimeout(pullCtx, w.cfg.FetchWait)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fetchCtx))
	if err != nil {
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		got++
		d := &delivery{msg: m}
		w.mu.Lock()
		stopping := w.stopping
		if !stopping {
			w.inflight[d] = struct{}{}
			w.handling.Add(1)
		}
		w.mu.Unlock()
		if stopping { // arrived after Shutdown began: hand it back
			_ = m.Nak()
			<-w.slots
			continue
		}
		go w.run(workCtx, d)
	}
	err = batch.Error()
	if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || pullCtx.Err() != nil {
		return got, nil
	}
	return got, err
}

// run handles one delivery and frees its slot.
func (w *Worker[T]) run(ctx context.Context, d *delivery) {
	defer w.handling.Done()
	defer func() { <-w.slots }()
	w.handle(ctx, d)
	w.mu.Lock()
	delete(w.inflight, d)
	w.mu.Unlock()
}

// heartbeat sends +WPI every cfg.Heartbeat until the returned stop is
// called.
func (w *Worker[T]) heartbeat(d *delivery) (stop func()) {
	if w.cfg.Heartbeat <= 0 {
		return func() {}
	}
	var mu sync.Mutex // guards t and stopped: stop may race the re-arm
	var t *time.Timer
	stopped := false
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(w.cfg.Heartbeat, func() {
		if !d.progress() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t.Reset(w.cfg.Heartbeat)
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}
