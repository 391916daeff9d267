package jetstream

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog"
)

// TestGroupsProperty drives a grouped consumer machine with random keys,
// random numbers of workers pulling random batches (250 cases, 1,500 random steps each, then a drain), random failures (NAK,
// NAK with a delay, ack-wait expiry, terminate), max_deliver with dead
// letters, max_ack_pending, push delivery, and restarts of the machine
// from its ledger, on a fake clock, one deterministic seed per case. The
// invariants:
//
//   - a message of a key is delivered only once every earlier message of
//     its key is finished (acked, terminated or dead-lettered), so the
//     first successful processing of each key is in store order;
//   - never two unfinished messages of one key are out at once;
//   - a finished message is never delivered again;
//   - in the end every message is finished (no loss, no starvation:
//     every key drains), with nothing pending, held back or tombstoned.
func TestGroupsProperty(t *testing.T) {
	t.Parallel()
	cases := 250
	if testing.Short() {
		cases = 60
	}
	for seed := range uint64(cases) {
		if !t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { runGroupsCase(t, seed) }) {
			return
		}
	}
}

// groupsSim is one property case: the machine, its fake stream and
// clock, the workers, and the model the invariants are checked against.
type groupsSim struct {
	t      *testing.T
	rng    *rand.Rand
	cfg    consumerConfig
	src    *fakeStream
	led    *memLedger
	m      *machine
	now    time.Time
	inbox  int
	hands  [][]uint64        // per worker: seqs delivered to it, not yet handled
	keyOf  map[uint64]string // seq → key ("" for none)
	bySeq  map[string][]uint64
	done   map[uint64]bool // finished: acked, terminated or dead-lettered
	out    map[uint64]bool // delivered and not finished, as the server sees it
	counts map[string]int  // deliveries per key, to see every key progress
}

func runGroupsCase(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	s := &groupsSim{t: t, rng: rng, src: &fakeStream{deaf: map[string]bool{}},
		now:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		keyOf: map[uint64]string{}, bySeq: map[string][]uint64{}, done: map[uint64]bool{},
		out: map[uint64]bool{}, counts: map[string]int{}}
	raw := map[string]any{"durable_name": "C", "ack_policy": "explicit", "ack_wait": int64(time.Second)}
	if rng.IntN(2) == 0 {
		raw["x_bus_group_by"] = map[string]any{"token": 2}
	} else {
		raw["x_bus_group_by"] = map[string]any{"header": "Key"}
	}
	if rng.IntN(3) == 0 {
		raw["max_ack_pending"] = 1 + rng.IntN(5)
	}
	if rng.IntN(2) == 0 {
		raw["max_deliver"] = 2 + rng.IntN(3)
		raw["x_bus_dead_letter_subject"] = "dlq"
	}
	push := rng.IntN(4) == 0
	if push {
		raw["deliver_subject"] = "w0.push"
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &s.cfg); err != nil {
		t.Fatal(err)
	}
	if e := s.cfg.normalize(streamConfig{Name: "S", Subjects: []string{"s.>"}}); e != nil {
		t.Fatal(e)
	}
	workers := 1 + rng.IntN(4)
	if push {
		workers = 1
	}
	s.hands = make([][]uint64, workers)
	keys, total := 1+rng.IntN(8), 20+rng.IntN(150)
	upfront := rng.IntN(total + 1)
	for range upfront {
		s.publish(keys)
	}
	s.led = newMemLedger(jetlog.NewConsumerState(time.Duration(s.cfg.AckWait), nil, func() time.Time { return s.now }))
	s.m = newMachine(machineConfig{stream: "S", cfg: s.cfg, src: s.src, ledger: s.led, now: s.now, start: 1,
		random: func() float64 { return 0.5 }})
	s.apply(s.m.Stored(s.now))

	for step := 0; step < 1500; step++ {
		switch r := rng.IntN(100); {
		case r < 10 && len(s.src.msgs) < total:
			s.publish(keys)
			s.apply(s.m.Stored(s.now))
		case r < 35 && !push:
			w := rng.IntN(workers)
			s.pull(w, 1+rng.IntN(3))
		case r < 80:
			s.handle(rng.IntN(workers), true)
		case r < 98:
			s.now = s.now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
			s.apply(s.m.Tick(s.now))
		default:
			s.restart()
		}
	}
	for len(s.src.msgs) < total {
		s.publish(keys)
	}
	s.apply(s.m.Stored(s.now))
	// Drain: no more failures; every worker pulls and acks until all is done.
	for i := 0; i < 5000 && len(s.done) < len(s.src.msgs); i++ {
		w := i % workers
		if !push {
			s.pull(w, 5)
		}
		for len(s.hands[w]) > 0 {
			s.handle(w, false)
		}
		if i%4 == 3 {
			s.now = s.now.Add(time.Second)
			s.apply(s.m.Tick(s.now))
		}
	}
	for seq := range uint64(len(s.src.msgs)) {
		if !s.done[seq+1] {
			t.Fatalf("seq %d (key %q) never finished; %d of %d done", seq+1, s.keyOf[seq+1], len(s.done), len(s.src.msgs))
		}
	}
	if n := s.led.Info().NumAckPending; n != 0 || s.m.groups.numHeld() != 0 || s.m.groups.numTombs() != 0 || len(s.m.groups.byKey) != 0 {
		t.Fatalf("drained, yet %d pending, %d held back, %d tombstones, %d busy groups", n, s.m.groups.numHeld(), s.m.groups.numTombs(), len(s.m.groups.byKey))
	}
	for k, seqs := range s.bySeq {
		if k != "" && s.counts[k] < len(seqs) {
			t.Fatalf("key %q: %d deliveries for %d messages", k, s.counts[k], len(seqs))
		}
	}
}

func (s *groupsSim) publish(keys int) {
	seq := uint64(len(s.src.msgs) + 1)
	k := "k" + strconv.Itoa(s.rng.IntN(keys))
	msg := jetlog.Msg{Seq: seq, Subject: "s." + k + "." + strconv.FormatUint(seq, 10), Time: s.now}
	if s.rng.IntN(10) == 0 { // no key: no header, or a subject with too few tokens
		k = ""
		msg.Subject = "s"
	} else {
		msg.Header = []byte("NATS/1.0\r\nKey: " + k + "\r\n\r\n")
	}
	s.src.msgs = append(s.src.msgs, msg)
	s.keyOf[seq] = k
	s.bySeq[k] = append(s.bySeq[k], seq)
}

func (s *groupsSim) pull(w, batch int) {
	s.inbox++
	inbox := "w" + strconv.Itoa(w) + "." + strconv.Itoa(s.inbox)
	body := fmt.Sprintf(`{"batch":%d,"expires":%d}`, batch, int64(time.Duration(1+s.rng.IntN(3))*time.Second))
	s.apply(s.m.Pull(inbox, []byte(body), s.now))
}

// handle lets worker w deal with the oldest message in its hands: ack
// it, or, when failures are on, NAK it, terminate it or drop it (the
// ack wait brings it back).
func (s *groupsSim) handle(w int, failures bool) {
	if len(s.hands[w]) == 0 {
		return
	}
	seq := s.hands[w][0]
	s.hands[w] = s.hands[w][1:]
	body := "+ACK"
	if failures {
		switch r := s.rng.IntN(100); {
		case r < 8:
			body = "-NAK"
		case r < 12:
			body = "-NAK 500ms"
		case r < 15:
			body = "+TERM"
		case r < 25:
			return // dropped
		}
	}
	if body == "+ACK" || body == "+TERM" {
		s.finish(seq)
	}
	s.apply(s.m.Acks([]ackMsg{parseAck(seq, []byte(body), "")}, s.now))
}

func (s *groupsSim) finish(seq uint64) {
	if s.out[seq] {
		delete(s.out, seq)
		s.done[seq] = true
	}
}

// restart makes a new machine on the same ledger, as a server restart
// does (startPosition: after what was delivered); waiting pulls are gone,
// workers keep what they hold.
func (s *groupsSim) restart() {
	start := s.led.Info().Delivered.Stream + 1
	s.m = newMachine(machineConfig{stream: "S", cfg: s.cfg, src: s.src, ledger: s.led, now: s.now, start: start,
		random: func() float64 { return 0.5 }})
	s.apply(s.m.Stored(s.now))
}

// apply checks a step's deliveries against the invariants and hands
// them to their workers.
func (s *groupsSim) apply(a actions) {
	s.t.Helper()
	if a.err != nil {
		s.t.Fatal(a.err)
	}
	for _, o := range a.out {
		if strings.HasPrefix(o.to, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.") {
			var adv maxDeliverAdvisory
			if err := json.Unmarshal(o.data, &adv); err != nil {
				s.t.Fatal(err)
			}
			s.finish(adv.StreamSeq)
			continue
		}
		if !o.deliver {
			continue
		}
		seq, ok := parseAckSubject(o.reply)
		if !ok {
			s.t.Fatalf("bad ack subject %q", o.reply)
		}
		k := s.keyOf[seq]
		if s.done[seq] {
			s.t.Fatalf("seq %d (key %q) delivered again after it was finished", seq, k)
		}
		if k != "" {
			for _, other := range s.bySeq[k] {
				switch {
				case other < seq && !s.done[other]:
					s.t.Fatalf("seq %d of key %q delivered before seq %d of its key was finished", seq, k, other)
				case other != seq && s.out[other]:
					s.t.Fatalf("seq %d of key %q delivered while seq %d of its key is out", seq, k, other)
				}
			}
			s.counts[k]++
		}
		s.out[seq] = true
		w, _ := strconv.Atoi(strings.TrimPrefix(strings.Split(o.to, ".")[0], "w"))
		if !slices.Contains(s.hands[w], seq) {
			s.hands[w] = append(s.hands[w], seq)
		}
	}
}
