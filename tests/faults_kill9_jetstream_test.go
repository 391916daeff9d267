package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// After kill -9, every acknowledged publish and every confirmed ack is
// still there, and the durable consumer resumes where it was.
func TestJetStreamSurvivesKill9(t *testing.T) {
	t.Parallel()
	testSurvivesKill9(t)
}

// The same with the store encrypted (docs/encryption.md).
func TestJetStreamSurvivesKill9Encrypted(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "bus.yaml")
	if err := os.WriteFile(cfg, []byte("jetstream:\n  key: kill-test-key\n  cipher: aes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testSurvivesKill9(t, "-c", cfg)
}

// testSurvivesKill9 is TestJetStreamSurvivesKill9 with extra arguments
// to the bus processes.
func testSurvivesKill9(t *testing.T, extra ...string) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	cmd, url := startBusProcess(t, dir, extra...)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "K", Subjects: []string{"k.>"}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "C", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	const published = 200
	// Async publishes, all acknowledged before the kill.
	for i := 1; i <= published; i++ {
		if _, err := js.PublishAsync(fmt.Sprintf("k.%d", i%7), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("publishes not acknowledged")
	}
	b, err := c.Fetch(50, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for m := range b.Messages() {
		n++
		if n <= 40 {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 50 {
		t.Fatalf("fetched %d", n)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	nc.Close()

	_, url2 := startBusProcess(t, dir, extra...)
	nc2, err := nats.Connect(url2)
	if err != nil {
		t.Fatal(err)
	}
	defer nc2.Close()
	js2, _ := jetstream.New(nc2)
	st2, err := js2.Stream(ctx, "K")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := st2.Info(ctx)
	if info.State.Msgs != published || info.State.LastSeq != published {
		t.Fatalf("after kill -9: %+v", info.State)
	}
	for seq := uint64(1); seq <= published; seq++ {
		m, err := st2.GetMsg(ctx, seq)
		if err != nil || string(m.Data) != fmt.Sprint(seq) {
			t.Fatalf("seq %d after kill -9: %v", seq, err)
		}
	}
	c2, err := st2.Consumer(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := c2.Info(ctx)
	if ci.Delivered.Stream != 50 || ci.NumAckPending != 10 {
		t.Fatalf("consumer after kill -9: delivered %+v, ack pending %d", ci.Delivered, ci.NumAckPending)
	}
	if _, err := js2.Publish(ctx, "k.1", []byte("after")); err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 && !jetlogEncrypted(filepath.Join(dir, "jetstream", "K")) {
		t.Fatal("the stream is not encrypted")
	}
}

// jetlogEncrypted says a stream directory holds an encrypted stream.
func jetlogEncrypted(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "stream.key"))
	return err == nil
}
