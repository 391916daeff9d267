package jetlog

import (
	"fmt"
	"runtime"
	"testing"
)

// benchCiphers are the encryption settings the sealed benchmarks
// compare: none (plaintext), and each cipher.
var benchCiphers = []string{"none", "chacha", "aes"}

func benchKeys(b *testing.B, name string) *Keyring {
	if name == "none" {
		return nil
	}
	return testKeys(b, name)
}

// BenchmarkSealedAppend measures append throughput and allocations with
// and without encryption: durability none isolates the CPU cost of
// sealing, always shows what is left of it beside an fsync per commit.
func BenchmarkSealedAppend(b *testing.B) {
	for _, mode := range []Durability{DurabilityNone, DurabilityAlways} {
		for _, size := range []int{128, 4096} {
			for _, c := range benchCiphers {
				b.Run(fmt.Sprintf("mode=%s/size=%d/cipher=%s", mode, size, c), func(b *testing.B) {
					benchAppendAsync(b, mode, 1, size, Options{Keys: benchKeys(b, c)})
				})
			}
		}
	}
}

// BenchmarkSealedRead measures sequential iteration and random Get of
// 128-byte messages with and without encryption (each read opens its
// record: a sealed read decrypts and authenticates it).
func BenchmarkSealedRead(b *testing.B) {
	for _, c := range benchCiphers {
		b.Run("cipher="+c, func(b *testing.B) { benchRead(b, Options{Keys: benchKeys(b, c)}, 50_000) })
	}
}

// BenchmarkSealRecord measures encoding and decoding one record alone,
// the CPU that sealing adds per message, free of the file system's noise;
// cpu-ns/op is the thread's CPU time (Linux), steadier than ns/op on a
// shared machine.
func BenchmarkSealRecord(b *testing.B) {
	key := make([]byte, dataKeySize)
	for _, size := range []int{128, 4096} {
		for _, c := range []Cipher{"", ChaChaPoly, AES} {
			name := string(c)
			if name == "" {
				name = "none"
			}
			var s *sealer
			if c != "" {
				var err error
				if s, err = newSealer("/b", c, key); err != nil {
					b.Fatal(err)
				}
			}
			payload := make([]byte, size)
			buf := make([]byte, 0, recordSize("bench.subject", nil, payload)+s.overhead())
			b.Run(fmt.Sprintf("size=%d/cipher=%s/encode", size, name), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				defer reportThreadCPU(b)()
				for b.Loop() {
					buf = s.appendRecord(buf[:0], kindMsg, 1, 1, "bench.subject", nil, payload, 0)
				}
			})
			rec := s.appendRecord(nil, kindMsg, 1, 1, "bench.subject", nil, payload, 0)
			b.Run(fmt.Sprintf("size=%d/cipher=%s/decode", size, name), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				defer reportThreadCPU(b)()
				for b.Loop() {
					buf = append(buf[:0], rec...) // a read fills a fresh buffer too
					if _, reason := s.decode(buf); reason != "" {
						b.Fatal(reason)
					}
				}
			})
		}
	}
}

// reportThreadCPU locks the benchmark to its thread and starts measuring
// its CPU time; the function it returns reports cpu-ns/op.
func reportThreadCPU(b *testing.B) func() {
	runtime.LockOSThread()
	start, ok := threadCPU()
	return func() {
		end, _ := threadCPU()
		runtime.UnlockOSThread()
		if ok && b.N > 0 {
			b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}
