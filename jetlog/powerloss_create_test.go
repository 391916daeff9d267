package jetlog

import (
	"fmt"
	"math/rand/v2"
	"path"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// The power-cut tests here create streams and consumers inside the crash
// window (issue #11, "Durability under strict POSIX metadata"): a stream
// created and at once appended to, or a consumer created and at once
// used, must keep everything acknowledged, which needs every directory and
// file they live in to be durable first.

// storeRoot is where these tests keep their streams, made durable once as
// the server makes its store directory.
const storeRoot = "/store/jetstream"

// createAcks records what a scenario had acknowledged: messages per stream
// and, per stream, whether its consumer's ack of seq 1 returned.
type createAcks struct {
	mu     sync.Mutex
	msgs   map[string]map[uint64]string // stream dir -> seq -> data
	acked1 map[string]bool              // stream dir -> consumer acked seq 1
}

func newCreateAcks() *createAcks {
	return &createAcks{msgs: map[string]map[uint64]string{}, acked1: map[string]bool{}}
}

func (a *createAcks) stored(dir string, seq uint64, data string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.msgs[dir] == nil {
		a.msgs[dir] = map[uint64]string{}
	}
	a.msgs[dir][seq] = data
}

func (a *createAcks) consumerAcked(dir string) {
	a.mu.Lock()
	a.acked1[dir] = true
	a.mu.Unlock()
}

// snapshot copies what was acknowledged so far.
func (a *createAcks) snapshot() *createAcks {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := newCreateAcks()
	for dir, m := range a.msgs {
		c.msgs[dir] = map[uint64]string{}
		for seq, d := range m {
			c.msgs[dir][seq] = d
		}
	}
	for dir, ok := range a.acked1 {
		c.acked1[dir] = ok
	}
	return c
}

// createAndUse opens a new stream in dir, appends to it, opens a consumer
// and delivers and acks seq 1, recording every acknowledgement. It stops at
// the first error (the power cut) and closes nothing: a cut machine does
// not close files.
func createAndUse(dir string, acks *createAcks, opts Options) []*Log {
	l, err := Open(dir, StreamConfig{Name: path.Base(dir)}, opts)
	if err != nil {
		return nil
	}
	logs := []*Log{l}
	for i := range 3 {
		data := fmt.Sprintf("%s-%d", path.Base(dir), i)
		ack, err := l.Append(Msg{Subject: "ev." + path.Base(dir), Data: []byte(data)}, Expect{})
		if err != nil {
			return logs
		}
		acks.stored(dir, ack.Seq, data)
	}
	c, err := l.OpenConsumer("C", ConsumerConfig{AckWait: time.Minute})
	if err != nil {
		return logs
	}
	if _, err := c.Deliver(1); err != nil {
		return logs
	}
	if ok, err := c.Ack(1); err != nil || !ok {
		return logs
	}
	acks.consumerAcked(dir)
	return logs
}

// checkCreated opens every stream of a crashed copy that had acknowledged
// something and checks it kept it: the messages, and the consumer's ack.
func checkCreated(t *testing.T, fsys *vfs.MemFS, keys *Keyring, want *createAcks, where string) {
	t.Helper()
	dirs := map[string]bool{}
	for dir := range want.msgs {
		dirs[dir] = true
	}
	for dir := range want.acked1 {
		dirs[dir] = true
	}
	for dir := range dirs {
		l, err := Open(dir, StreamConfig{Name: path.Base(dir)}, Options{FS: fsys, Keys: keys})
		if err != nil {
			t.Fatalf("%s: Open %s: %v", where, dir, err)
		}
		if rep := l.Recovery(); len(rep.Corrupt) != 0 {
			t.Fatalf("%s: %s: corruption %+v", where, dir, rep.Corrupt)
		}
		for seq, data := range want.msgs[dir] {
			m, err := l.Get(seq)
			if err != nil || string(m.Data) != data {
				t.Fatalf("%s: %s: acknowledged seq %d = %q, %v; want %q (state %+v)", where, dir, seq, m.Data, err, data, l.State())
			}
		}
		if want.acked1[dir] {
			names, err := l.ConsumerNames()
			if err != nil || len(names) != 1 {
				t.Fatalf("%s: %s: consumers %v, %v; want the acknowledged one", where, dir, names, err)
			}
			c, err := l.OpenConsumer("C", ConsumerConfig{AckWait: time.Minute})
			if err != nil {
				t.Fatalf("%s: %s: OpenConsumer: %v", where, dir, err)
			}
			if info := c.Info(); info.AckFloor.Stream < 1 || info.NumAckPending != 0 {
				t.Fatalf("%s: %s: consumer lost its acknowledged ack: %+v", where, dir, info)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatalf("%s: %s: Close: %v", where, dir, err)
		}
	}
}

// A power cut at every file-system operation of creating two streams (the
// second one's parent directories new too) and a consumer in each, and
// using them at once, loses nothing acknowledged.
func TestPowerLossCreatingStreamsEveryStep(t *testing.T) {
	t.Parallel()
	testCreatingEveryStep(t, nil)
}

// testCreatingEveryStep is TestPowerLossCreatingStreamsEveryStep with the
// given keys (nil: plaintext).
func testCreatingEveryStep(t *testing.T, keys *Keyring) {
	rng := rand.New(rand.NewPCG(11, 12))
	for k := 0; ; k++ {
		fsys := vfs.NewMemFS()
		if err := vfs.MkdirAllDurable(fsys, storeRoot, 0o755); err != nil {
			t.Fatal(err)
		}
		count := failFrom(fsys, k)
		acks := newCreateAcks()
		var logs []*Log
		logs = append(logs, createAndUse(storeRoot+"/A", acks, Options{FS: fsys, Keys: keys})...)
		logs = append(logs, createAndUse(storeRoot+"/tenant/B", acks, Options{FS: fsys, Keys: keys})...)
		seen := count()
		crashed := fsys.CrashClone(rng)
		fsys.SetFault(nil)
		for _, l := range logs {
			_ = l.Close() // the original is past its cut: errors expected
		}
		checkCreated(t, crashed, keys, acks, fmt.Sprintf("cut after %d ops", k))
		if seen <= k { // the scenario ran to its end before the cut
			t.Logf("%d cut points", k+1)
			if len(acks.msgs) != 2 || len(acks.acked1) != 2 {
				t.Fatalf("uncut scenario acknowledged %d streams and %d consumers", len(acks.msgs), len(acks.acked1))
			}
			break
		}
	}
}

// Power cuts at random moments while goroutines keep creating streams and
// consumers, some in new parent directories, using and closing them:
// everything acknowledged before a cut is found after it. Each round lets
// the writers create one more stream and checks the newest few, so the
// cost stays linear in the rounds.
func TestPowerLossCreatingStreamsConcurrently(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	if err := vfs.MkdirAllDurable(fsys, storeRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	acks := newCreateAcks()
	stop := make(chan struct{})
	tickets := make(chan int)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				var i int
				select {
				case <-stop:
					return
				case i = <-tickets:
				}
				dir := fmt.Sprintf("%s/s%d", storeRoot, i)
				if i%3 == 0 {
					dir = fmt.Sprintf("%s/g%d/s%d", storeRoot, i, i)
				}
				logs := createAndUse(dir, acks, Options{FS: fsys})
				if len(logs) == 0 {
					t.Errorf("create %s failed", dir)
					return
				}
				for _, l := range logs {
					if err := l.Close(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rounds := powerLossRounds() / 4
	next := 0
	for round := range rounds {
		tickets <- next // a writer is free: one starts another stream
		next++
		for range rng.IntN(200) { // let it get some way into it
			runtime.Gosched()
		}
		want := acks.snapshot()
		for dir := range want.msgs { // only the newest streams: older ones were checked already
			var i int
			if _, err := fmt.Sscanf(path.Base(dir), "s%d", &i); err == nil && i < next-4 {
				delete(want.msgs, dir)
				delete(want.acked1, dir)
			}
		}
		checkCreated(t, fsys.CrashClone(rng), nil, want, fmt.Sprintf("round %d", round))
		if t.Failed() {
			break
		}
	}
	close(stop)
	wg.Wait()
	if len(acks.acked1) < 10 {
		t.Fatalf("only %d consumers acknowledged: the crash window saw too little", len(acks.acked1))
	}
}

// A stream directory left by a crash before it was made durable (visible
// after a process restart, not yet on disk) is made durable by the next
// Open that stores into it, as is a consumer's.
func TestPowerLossAfterUndurableCreateIsRetried(t *testing.T) {
	t.Parallel()
	fsys := vfs.NewMemFS()
	if err := vfs.MkdirAllDurable(fsys, storeRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := storeRoot + "/S"
	// The first process made the directories and died before syncing.
	if err := fsys.MkdirAll(dir+"/"+consumersDir+"/C", 0o755); err != nil {
		t.Fatal(err)
	}
	acks := newCreateAcks()
	logs := createAndUse(dir, acks, Options{FS: fsys})
	crashed := fsys.CrashClone(nil)
	for _, l := range logs {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(acks.msgs[dir]) != 3 || !acks.acked1[dir] {
		t.Fatalf("scenario acknowledged %+v", acks)
	}
	checkCreated(t, crashed, nil, acks, "after the retried create")
}
