package jetlog

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv names the stream directory a re-executed test binary
// appends to until it is killed (see TestMain).
const crashChildEnv = "JETLOG_CRASH_CHILD"

// crashKeyEnv, if set, is the key the child encrypts its stream with
// (chachapoly).
const crashKeyEnv = "JETLOG_CRASH_KEY"

var crashCfg = StreamConfig{Name: "CRASH", Durability: DurabilityAlways}

var crashOpts = Options{SegmentSize: 8 << 10}

// crashChild appends from several goroutines and prints "seq data" for
// every acknowledged append, until it is killed.
func crashChild() {
	opts := crashOpts
	if key := os.Getenv(crashKeyEnv); key != "" {
		keys, err := NewKeyring(ChaChaPoly, key, "")
		if err != nil {
			fmt.Fprintln(os.Stderr, "keys:", err)
			os.Exit(2)
		}
		opts.Keys = keys
	}
	l, err := Open(os.Getenv(crashChildEnv), crashCfg, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				data := fmt.Sprintf("p%d-g%d-%d", os.Getpid(), g, i)
				ack, err := l.Append(Msg{Subject: "crash." + strconv.Itoa(g), Data: []byte(data)}, Expect{})
				if err != nil {
					fmt.Fprintln(os.Stderr, "append:", err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintf(out, "%d %s\n", ack.Seq, data)
				_ = out.Flush() // the parent only trusts what it read
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCrashKill re-executes the test binary as a child that appends in
// always mode, SIGKILLs it at a random point, then checks that every
// append the child reported is present and intact, sequences are
// contiguous, and appending continues.
//
// It is not parallel, nor is its encrypted twin: a child forked by
// os/exec holds a copy of every descriptor of the test process until it
// execs, LOCK files' flocks included, so a parallel test that closes a
// log and opens it again at that moment finds its own directory locked
// (TestSparseNextAgreesWithScan did, 3 runs in 4 beside this one). The
// server execs no children; a test binary that does must not run them
// beside tests that reopen logs.
func TestCrashKill(t *testing.T) {
	testCrashKill(t, nil, "")
}

// testCrashKill is TestCrashKill with the child's stream encrypted under
// key (with keys, the parent's keyring for it) unless key is "".
func testCrashKill(t *testing.T, keys *Keyring, key string) {
	dir := t.TempDir()
	opts := crashOpts
	opts.Keys = keys
	rounds := 20
	if os.Getenv("JETLOG_LONG") != "" {
		rounds = 100
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	reported := map[uint64]string{}
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashKeyEnv+"="+key)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		// Let it run until its first ack, then a random while longer.
		first, ok := <-lines
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("round %d: child produced nothing", round)
		}
		time.Sleep(time.Duration(rng.IntN(80)) * time.Millisecond) // the kill point
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		got := []string{first}
		for line := range lines {
			got = append(got, line)
		}
		_ = cmd.Wait() // killed: the error is expected
		for _, line := range got {
			seqStr, data, ok := strings.Cut(line, " ")
			seq, err := strconv.ParseUint(seqStr, 10, 64)
			if !ok || err != nil {
				continue // a line cut by the kill was never reported whole
			}
			reported[seq] = data
		}
		l, err := Open(dir, crashCfg, opts)
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if rep := l.Recovery(); len(rep.Corrupt) != 0 {
			t.Fatalf("round %d: corruption after SIGKILL: %+v", round, rep.Corrupt)
		}
		st := l.State()
		if st.FirstSeq != 1 || st.NumDeleted != 0 || st.Msgs != st.LastSeq {
			t.Fatalf("round %d: not contiguous: %+v", round, st)
		}
		for seq, data := range reported {
			m, err := l.Get(seq)
			if err != nil || string(m.Data) != data {
				t.Fatalf("round %d: reported seq %d = %q, %v; want %q", round, seq, m.Data, err, data)
			}
		}
		ack, err := l.Append(Msg{Subject: "crash.parent", Data: []byte("parent")}, Expect{})
		if err != nil || ack.Seq != st.LastSeq+1 {
			t.Fatalf("round %d: append after recovery = %+v, %v", round, ack, err)
		}
		reported[ack.Seq] = "parent"
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acks reported, last seq %d, torn bytes %d", round, len(got), st.LastSeq, l.Recovery().TruncatedBytes)
	}
}
