package jetlog

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// BenchmarkAppend measures append throughput per durability mode, number
// of concurrent appenders and payload size, and reports fsyncs per
// message. Run with -benchtime=Nx for a fixed number of appends.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []Durability{DurabilityAlways, DurabilityInterval, DurabilityNone} {
		for _, writers := range []int{1, 16, 256} {
			for _, size := range []int{128, 4096} {
				name := fmt.Sprintf("mode=%s/writers=%d/size=%d", mode, writers, size)
				b.Run(name, func(b *testing.B) { benchAppend(b, mode, writers, size) })
			}
		}
	}
}

func benchAppend(b *testing.B, mode Durability, writers, size int) {
	l, err := Open(b.TempDir(), StreamConfig{Name: "B", Durability: mode, SyncInterval: 10 * time.Millisecond}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	payload := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	before := l.Stats()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := b.N / writers
	extra := b.N % writers
	for w := range writers {
		n := per
		if w < extra {
			n++
		}
		wg.Go(func() {
			for range n {
				if _, err := l.Append(Msg{Subject: "bench.subject", Data: payload}, Expect{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	after := l.Stats()
	if n := after.Appends - before.Appends; n > 0 {
		b.ReportMetric(float64(after.Fsyncs-before.Fsyncs)/float64(n), "fsyncs/msg")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "appends/s")
	}
}

// BenchmarkRead measures sequential iteration and random Get over a
// stream of 128-byte messages.
func BenchmarkRead(b *testing.B) { benchRead(b, Options{}, 100_000) }

// benchRead is BenchmarkRead over n messages of a stream opened with
// opts.
func benchRead(b *testing.B, opts Options, n int) {
	l, err := Open(b.TempDir(), StreamConfig{Name: "R", Durability: DurabilityNone}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	payload := make([]byte, 128)
	batch := make([]Msg, 1000)
	for i := range batch {
		batch[i] = Msg{Subject: "read.subject", Data: payload}
	}
	for range n / len(batch) {
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("sequential", func(b *testing.B) {
		b.SetBytes(128)
		b.ReportAllocs()
		read := 0
		for read < b.N {
			for _, err := range l.Messages(1) {
				if err != nil {
					b.Fatal(err)
				}
				read++
				if read == b.N {
					break
				}
			}
		}
	})
	b.Run("random", func(b *testing.B) {
		b.SetBytes(128)
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 1))
		for b.Loop() {
			if _, err := l.Get(1 + rng.Uint64N(uint64(n))); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkConsumerAck measures deliver+ack pairs on a durable consumer in
// always mode with concurrent ackers (each pair is two journaled, synced
// changes; concurrent callers share fsyncs).
func BenchmarkConsumerAck(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			l, err := Open(b.TempDir(), StreamConfig{Name: "C"}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := l.Close(); err != nil {
					b.Error(err)
				}
			}()
			c, err := l.OpenConsumer("D", ConsumerConfig{AckWait: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for seq := uint64(w + 1); seq <= uint64(b.N); seq += uint64(writers) {
						if _, err := c.Deliver(seq); err != nil {
							b.Error(err)
							return
						}
						if _, err := c.Ack(seq); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "acks/s")
		})
	}
}

// BenchmarkAppendBatch measures one caller storing batches (the server's
// per-stream ingest does this) in always mode.
func BenchmarkAppendBatch(b *testing.B) {
	for _, batch := range []int{16, 256} {
		b.Run(fmt.Sprintf("batch=%d/size=128", batch), func(b *testing.B) {
			l, err := Open(b.TempDir(), StreamConfig{Name: "B"}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := l.Close(); err != nil {
					b.Error(err)
				}
			}()
			msgs := make([]Msg, batch)
			for i := range msgs {
				msgs[i] = Msg{Subject: "bench.subject", Data: make([]byte, 128)}
			}
			b.SetBytes(128)
			b.ReportAllocs()
			before := l.Stats()
			start := time.Now()
			for n := 0; n < b.N; n += batch {
				if _, err := l.AppendBatch(msgs[:min(batch, b.N-n)], Expect{}); err != nil {
					b.Fatal(err)
				}
			}
			after := l.Stats()
			b.ReportMetric(float64(after.Fsyncs-before.Fsyncs)/float64(b.N), "fsyncs/msg")
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "appends/s")
		})
	}
}

// BenchmarkOpen measures a clean reopen of a stream of 128 B messages on
// disk, with the catalog snapshot ("restore") and without it ("replay",
// which decodes every index). One op is one Open.
func BenchmarkOpen(b *testing.B) {
	for _, msgs := range []int{100_000, 1_000_000, 4_000_000} {
		dir := b.TempDir()
		cfg := StreamConfig{Name: "B", Durability: DurabilityNone}
		l, err := Open(dir, cfg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		batch := make([]Msg, 1000)
		for i := range batch {
			batch[i] = Msg{Subject: fmt.Sprintf("bench.%d", i%100), Data: make([]byte, 128)}
		}
		for range msgs / len(batch) {
			if _, err := l.AppendBatch(batch, Expect{}); err != nil {
				b.Fatal(err)
			}
		}
		segments := len(l.cat.segs)
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"restore", "replay"} {
			b.Run(fmt.Sprintf("msgs=%d/%s", msgs, mode), func(b *testing.B) {
				for b.Loop() {
					if mode == "replay" {
						b.StopTimer()
						if err := (vfs.OSFS{}).Remove(dir + "/" + catalogFile); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					l, err := Open(dir, cfg, Options{})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if got := l.Recovery().CatalogRestored; got != (mode == "restore") {
						b.Fatalf("CatalogRestored = %v", got)
					}
					if err := l.Close(); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(segments), "segments")
			})
		}
	}
}

// BenchmarkNextFiltered measures wildcard lookups, which match subjects
// against the filter: Next walking slots (many subjects, one op finds the
// next match from a random seq) and NumPending over the subject summaries.
func BenchmarkNextFiltered(b *testing.B) {
	const n, subjectCount = 100_000, 20_000
	l := benchLogOf(b, n, func(i int) string {
		k := i % subjectCount
		return fmt.Sprintf("orders.%s.%d", []string{"eu", "us"}[k%2], k)
	})
	b.Run("next_slots", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			// One in 2,000 messages matches: a walk of ~1,000 slots.
			if _, err := l.Next(1+rng.Uint64N(n/2), "orders.*.1999"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("num_pending", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if l.NumPending(1, "orders.eu.*") == 0 {
				b.Fatal("none pending")
			}
		}
	})
}

// BenchmarkAppendAsync measures asynchronous appends from publishers that
// pipeline, as the server's connection readers do: each hands messages to
// the appender without waiting and counts the callbacks. Compare with
// BenchmarkAppend (one blocked goroutine per message in flight).
func BenchmarkAppendAsync(b *testing.B) {
	for _, mode := range []Durability{DurabilityAlways, DurabilityNone} {
		for _, publishers := range []int{1, 16} {
			for _, size := range []int{128, 4096} {
				name := fmt.Sprintf("mode=%s/publishers=%d/size=%d", mode, publishers, size)
				b.Run(name, func(b *testing.B) { benchAppendAsync(b, mode, publishers, size, Options{}) })
			}
		}
	}
}

func benchAppendAsync(b *testing.B, mode Durability, publishers, size int, opts Options) {
	l, err := Open(b.TempDir(), StreamConfig{Name: "B", Durability: mode}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	}()
	payload := make([]byte, size)
	var acked sync.WaitGroup
	done := func(_ PubAck, err error) {
		if err != nil {
			b.Error(err)
		}
		acked.Done()
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	before := l.Stats()
	b.ResetTimer()
	start := time.Now()
	acked.Add(b.N)
	var wg sync.WaitGroup
	per, extra := b.N/publishers, b.N%publishers
	for p := range publishers {
		n := per
		if p < extra {
			n++
		}
		wg.Go(func() {
			m := Msg{Subject: "bench.subject", Data: payload}
			for range n {
				l.AppendAsync(m, Expect{}, done)
			}
		})
	}
	wg.Wait()
	acked.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	after := l.Stats()
	if n := after.Appends - before.Appends; n > 0 {
		b.ReportMetric(float64(after.Fsyncs-before.Fsyncs)/float64(n), "fsyncs/msg")
		b.ReportMetric(float64(n)/elapsed.Seconds(), "appends/s")
	}
}

// BenchmarkSubjectCounts measures STREAM.INFO's subjects_filter over a
// stream of 100,000 distinct subjects: a literal filter is one lookup,
// a wildcard one pass over the subjects.
func BenchmarkSubjectCounts(b *testing.B) {
	const n = 100_000
	l := benchLogOf(b, n, func(i int) string { return fmt.Sprintf("subj.%d", i) })
	for _, bc := range []struct {
		filter string
		want   int
	}{{"subj.50000", 1}, {"subj.none", 0}, {"subj.*", n}} {
		b.Run(bc.filter, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := l.SubjectCounts(bc.filter); len(got) != bc.want {
					b.Fatalf("%d subjects, want %d", len(got), bc.want)
				}
			}
		})
	}
}

// benchLogOf opens an unsynced log holding n messages of 16 B, message i
// on subject(i), closed when the benchmark ends (n a multiple of 1,000).
func benchLogOf(b *testing.B, n int, subject func(i int) string) *Log {
	b.Helper()
	l, err := Open(b.TempDir(), StreamConfig{Name: "B", Durability: DurabilityNone}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := l.Close(); err != nil {
			b.Error(err)
		}
	})
	batch := make([]Msg, 1000)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = Msg{Subject: subject(i + j), Data: make([]byte, 16)}
		}
		if _, err := l.AppendBatch(batch, Expect{}); err != nil {
			b.Fatal(err)
		}
	}
	return l
}
