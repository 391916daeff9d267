package jetstream

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/snapshot"
	"github.com/bus-dev/bus/subjects"
	"github.com/nats-io/nuid"
)

// STREAM.SNAPSHOT (docs/backup.md): the reference's request and chunk
// flow, bus's own format (package snapshot). The response comes first,
// then the chunks on deliver_subject, each with a reply the receiver
// answers to free a slot of the window, then an empty message whose
// status says how it ended (204: complete).
const (
	typeStreamSnapshot = "io.nats.jetstream.api.v1.stream_snapshot_response"

	snapChunkDefault  = 128 << 10
	snapWindowDefault = 8 << 20
	// snapAckTimeout is how long a chunk waits for a free slot before
	// the snapshot is abandoned (the receiver stalled or left).
	snapAckTimeout = 5 * time.Second
	// snapInterestWait is how long the deliver subject may take to get
	// a listener.
	snapInterestWait = 2 * time.Second
	snapReadBatch    = 256
)

type snapshotRequest struct {
	DeliverSubject string `json:"deliver_subject"`
	NoConsumers    bool   `json:"no_consumers,omitempty"`
	ChunkSize      int    `json:"chunk_size,omitempty"`
	WindowSize     int    `json:"window_size,omitempty"`
	CheckMsgs      bool   `json:"jsck,omitempty"`
	// AfterSeq makes an increment (docs/backup.md): only the messages
	// after it, the last seq of the backup the increment follows.
	AfterSeq uint64 `json:"x_bus_after_seq,omitempty"`
}

type snapshotResponse struct {
	Type   string        `json:"type"`
	Config *streamConfig `json:"config,omitempty"`
	State  *streamState  `json:"state,omitempty"`
}

func (svc *Service) streamSnapshot(r apiRequest, name string) (any, *apiError) {
	st, e := svc.lookup(name)
	if e != nil {
		return nil, e
	}
	var req snapshotRequest
	if len(r.body) == 0 {
		return nil, newAPIError(400, 10003, "bad request")
	}
	if e := decodeBody(r.body, &req); e != nil {
		return nil, e
	}
	if !subjects.ValidLiteral(req.DeliverSubject) {
		return nil, newAPIError(400, 10015, "deliver subject not valid")
	}
	// A snapshot hands out every message: only to who may read them all,
	// as a pull of the whole stream (requestrights.go, refusePull).
	if r.from != nil && !svc.sh.referenceReads && !r.from.MayRead(">") {
		if e := svc.sh.authorize(r.from, flow{reads: svc.sh.heldSubjects(st.config(), maxHeldDepth)}); e != nil {
			return nil, e
		}
	}
	cut := st.snapshotCut(!req.NoConsumers)
	if req.AfterSeq > cut.header.LastSeq {
		return nil, newAPIError(400, 10400, "x_bus_after_seq %d is past the stream's last seq %d: the stream is not the one backed up before", req.AfterSeq, cut.header.LastSeq)
	}
	cut.header.AfterSeq = req.AfterSeq
	info := st.info("")
	resp := snapshotResponse{Type: typeStreamSnapshot, Config: &info.Config, State: &info.State}
	return followedBy{resp, func() { svc.startSnapshot(st, cut, req) }}, nil // the chunks follow the response
}

// startSnapshot sends the chunks of cut on their own goroutine.
func (svc *Service) startSnapshot(st *stream, cut snapCut, req snapshotRequest) {
	svc.sh.log.Info("snapshot started", "stream", st.name, "last_seq", cut.header.LastSeq, "consumers", len(cut.consumers))
	go func() {
		err := svc.sendSnapshot(st, cut, req)
		if err != nil {
			svc.sh.log.Warn("snapshot failed", "stream", st.name, "err", err)
			return
		}
		svc.sh.log.Info("snapshot completed", "stream", st.name, "messages", cut.header.LastSeq)
	}()
}

// snapCut is what a snapshot holds: the messages up to header.LastSeq and
// the consumers' state read just before it was taken, so no consumer is
// past the cut.
type snapCut struct {
	header    snapshot.Header
	consumers []snapshot.Consumer
}

func (st *stream) snapshotCut(withConsumers bool) snapCut {
	var cut snapCut
	if withConsumers {
		st.mu.Lock()
		list := make([]*consumer, 0, len(st.consumers))
		for _, c := range st.consumers {
			// A memory stream's named consumers are not journaled, and
			// are in its snapshot all the same.
			if c.durable || (st.memory && c.cfg.Durable != "") {
				list = append(list, c)
			}
		}
		st.mu.Unlock()
		sort.Slice(list, func(i, j int) bool { return list[i].name < list[j].name })
		for _, c := range list {
			cut.consumers = append(cut.consumers, c.snapshotState())
		}
	}
	cfg := st.config()
	raw, _ := cfg.MarshalJSON() // the owner is not part of it: a restore sets its own
	s := st.log.State()
	first := s.FirstSeq
	if first == 0 {
		first = 1
	}
	cut.header = snapshot.Header{Version: snapshot.Version, Config: raw, Created: st.created, FirstSeq: first, LastSeq: s.LastSeq, Time: st.sh.now().UTC()}
	return cut
}

// snapshotState reads the consumer's config and delivery state at once.
func (c *consumer) snapshotState() snapshot.Consumer {
	raw, _ := c.cfg.MarshalJSON()
	sc := snapshot.Consumer{Name: c.name, Created: c.created, Config: raw}
	_ = c.ledger.Update(func(s *jetlog.ConsumerState) {
		sc.Delivered = snapshot.SeqPair{Consumer: s.Delivered.Consumer, Stream: s.Delivered.Stream}
		sc.AckFloor = snapshot.SeqPair{Consumer: s.AckFloor.Consumer, Stream: s.AckFloor.Stream}
		for _, p := range s.Pending {
			sc.Pending = append(sc.Pending, snapshot.Pending{Stream: p.Stream, Consumer: p.Consumer, Deliveries: p.Deliveries, Deadline: p.Deadline})
		}
	}, false)
	sort.Slice(sc.Pending, func(i, j int) bool { return sc.Pending[i].Stream < sc.Pending[j].Stream })
	return sc
}

// snapStatus is how a snapshot ended, carried by its final message.
type snapStatus struct {
	hdr string
	err error
}

func (s *snapStatus) Error() string { return s.err.Error() }

var (
	errSnapNoInterest = &snapStatus{"NATS/1.0 408 No Interest\r\n\r\n", errors.New("no interest")}
	errSnapNoFlow     = &snapStatus{"NATS/1.0 408 No Flow Response\r\n\r\n", errors.New("no flow response")}
)

// chunker cuts the compressed stream into chunks and sends each once the
// window has a free slot: at most window/chunk chunks are unacked, so a
// slow reader holds the snapshot back instead of the server buffering it.
type chunker struct {
	svc     *Service
	deliver string
	ackSubj string
	chunk   []byte
	size    int
	slots   chan struct{}
	gone    chan struct{} // closed when the deliver subject loses its listener
	index   int
}

func (ck *chunker) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := ck.size - len(ck.chunk)
		take := min(room, len(p))
		ck.chunk = append(ck.chunk, p[:take]...)
		p = p[take:]
		if len(ck.chunk) == ck.size {
			if err := ck.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (ck *chunker) flush() error {
	if len(ck.chunk) == 0 {
		return nil
	}
	timer := time.NewTimer(snapAckTimeout)
	defer timer.Stop()
	select {
	case <-ck.slots:
	case <-ck.gone:
		return errSnapNoInterest
	case <-timer.C:
		return errSnapNoFlow
	case <-ck.svc.stop:
		return &snapStatus{"NATS/1.0 503 Server Shutdown\r\n\r\n", errors.New("server shutdown")}
	}
	ck.index++
	reply := fmt.Sprintf("%s.%d.%d", ck.ackSubj, len(ck.chunk), ck.index)
	ck.svc.sh.core.Publish(ck.deliver, reply, nil, ck.chunk)
	ck.chunk = ck.chunk[:0]
	return nil
}

// sendSnapshot streams the cut to req.DeliverSubject and ends with the
// status message.
func (svc *Service) sendSnapshot(st *stream, cut snapCut, req snapshotRequest) error {
	size := req.ChunkSize
	if size == 0 {
		size = snapChunkDefault
	}
	window := req.WindowSize
	if window == 0 {
		window = snapWindowDefault
	}
	size = min(max(size, 1<<10), 1<<20)
	window = max(min(max(window, 1<<10), 32<<20), size)
	slots := window / size

	ck := &chunker{svc: svc, deliver: req.DeliverSubject, chunk: make([]byte, 0, size), size: size,
		slots: make(chan struct{}, slots), gone: make(chan struct{})}
	for range slots {
		ck.slots <- struct{}{}
	}
	ck.ackSubj = "$JS.SNAPSHOT.ACK." + st.name + "." + nuid.Next()
	ackSub, err := svc.sh.core.Subscribe(ck.ackSubj+".>", func(_, _ []byte, _ int, _ []byte) bool {
		select {
		case ck.slots <- struct{}{}:
		default: // an ack for a slot never taken: ignore
		}
		return true
	})
	if err != nil {
		return err
	}
	defer svc.sh.core.Unsubscribe(ackSub)

	changed := make(chan struct{}, 1)
	cancel := svc.sh.core.WatchInterest(req.DeliverSubject, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	if !svc.awaitInterest(req.DeliverSubject, changed) {
		svc.sh.core.Publish(req.DeliverSubject, "", []byte(errSnapNoInterest.hdr), nil)
		return errSnapNoInterest
	}
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		for {
			select {
			case <-changed:
				if !svc.sh.core.HasInterest(req.DeliverSubject) {
					close(ck.gone)
					return
				}
			case <-watchDone:
				return
			}
		}
	}()

	err = writeSnapshot(st, cut, ck)
	if err == nil {
		err = ck.flush()
	}
	hdr := "NATS/1.0 204\r\n\r\n"
	if err != nil {
		var s *snapStatus
		if errors.As(err, &s) {
			hdr = s.hdr
		} else {
			hdr = fmt.Sprintf("NATS/1.0 500 %s\r\n\r\n", sanitizeStatus(err.Error()))
		}
	}
	svc.sh.core.Publish(req.DeliverSubject, "", []byte(hdr), nil)
	return err
}

// awaitInterest waits for the receiver's subscription. A client
// subscribes to its deliver subject once it has the response (natscli
// does), and until then a wildcard it holds (its request inbox) may
// already match: chunks sent then would be dropped. So the snapshot
// waits for a subscription to be added, and only after snapInterestWait
// settles for whatever matches (a receiver that subscribed first).
func (svc *Service) awaitInterest(subject string, changed <-chan struct{}) bool {
	timer := time.NewTimer(snapInterestWait)
	defer timer.Stop()
	for {
		select {
		case <-changed:
			if svc.sh.core.HasInterest(subject) {
				return true
			}
		case <-timer.C:
			return svc.sh.core.HasInterest(subject)
		case <-svc.stop:
			return false
		}
	}
}

// sanitizeStatus keeps a status description on one header line.
func sanitizeStatus(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// writeSnapshot encodes the cut: header, the messages up to the cut read
// in batches (memory bounded by a batch and a chunk), consumers, end.
func writeSnapshot(st *stream, cut snapCut, ck *chunker) error {
	sw, err := snapshot.NewWriter(ck)
	if err != nil {
		return err
	}
	if err := sw.JSON(snapshot.KindHeader, cut.header); err != nil {
		return err
	}
	var count uint64
	for from := max(cut.header.FirstSeq, cut.header.AfterSeq+1); from <= cut.header.LastSeq; {
		msgs, err := st.log.NextBatch(from, nil, snapReadBatch)
		if errors.Is(err, jetlog.ErrNotFound) || (err == nil && len(msgs) == 0) {
			break
		}
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Seq > cut.header.LastSeq {
				from = m.Seq
				break
			}
			if err := sw.Msg(snapshot.Msg{Seq: m.Seq, Time: m.Time.UnixNano(), Subject: m.Subject, Header: m.Header, Data: m.Data}); err != nil {
				return err
			}
			count++
			from = m.Seq + 1
		}
	}
	for _, c := range cut.consumers {
		if err := sw.JSON(snapshot.KindConsumer, c); err != nil {
			return err
		}
	}
	if err := sw.JSON(snapshot.KindEnd, snapshot.End{Messages: count, Consumers: len(cut.consumers)}); err != nil {
		return err
	}
	return sw.Close()
}
