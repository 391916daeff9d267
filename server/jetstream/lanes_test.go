package jetstream

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sync"
	"testing"
	"time"

	"github.com/bus-dev/bus/jetlog/vfs"
)

// stallFS is the operating system's file system, except that creating
// the directory of the stream named slow blocks until release is closed:
// a change to that stream that takes as long as the test wants.
type stallFS struct {
	vfs.OSFS
	slow    string
	once    sync.Once
	entered chan struct{} // closed when the create reached the directory
	release chan struct{}
}

func newStallFS(slow string) *stallFS {
	return &stallFS{slow: slow, entered: make(chan struct{}), release: make(chan struct{})}
}

func (f *stallFS) Mkdir(dir string, perm fs.FileMode) error {
	if path.Base(dir) == f.slow {
		f.once.Do(func() { close(f.entered) })
		<-f.release
	}
	return f.OSFS.Mkdir(dir, perm)
}

// startStalled starts a service whose stream slow stalls at creation.
func startStalled(t *testing.T, slow string, opts Options) (*Service, *fakeCore, *stallFS) {
	t.Helper()
	fsys := newStallFS(slow)
	opts.Dir, opts.FS = t.TempDir(), fsys
	core := newFakeCore()
	svc, err := New(core, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-fsys.release:
		default:
			close(fsys.release)
		}
		svc.Shutdown()
	})
	return svc, core, fsys
}

// request queues an API request as a client's publish would.
func request(svc *Service, subject, reply, body string) {
	svc.captureRequest(nil, []byte(apiPrefix+subject), []byte(reply), -1, []byte(body))
}

// answer returns the response sent to reply, if there is one yet.
func answer(core *fakeCore, reply string) (apiResponse, bool) {
	core.mu.Lock()
	defer core.mu.Unlock()
	for _, m := range core.sent {
		if m.to == reply {
			var r apiResponse
			_ = json.Unmarshal(m.data, &r)
			return r, true
		}
	}
	return apiResponse{}, false
}

// awaitAnswer polls for the response sent to reply.
func awaitAnswer(t *testing.T, core *fakeCore, reply string) apiResponse {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r, ok := answer(core, reply); ok {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no answer on %s", reply)
		}
		time.Sleep(time.Millisecond)
	}
}

// streamIn returns a stream name whose changes go to lane (or, with
// other, to any other lane).
func streamIn(lane int, other bool) string {
	for i := range 1000 {
		name := fmt.Sprintf("S%d", i)
		if l := changeLane(apiPrefix + "STREAM.CREATE." + name); (l == lane) != other {
			return name
		}
	}
	panic("no stream name hashes to the lane asked for")
}

func createBody(name string, maxBytes int64) string {
	return fmt.Sprintf(`{"name":%q,"subjects":["%s.>"],"max_bytes":%d}`, name, name, maxBytes)
}

// A slow change to one stream (here a create stuck on its directory)
// must not stall changes to streams of other lanes, nor reads; changes
// to streams of its own lane wait behind it, in order.
func TestSlowChangeStallsOnlyItsLane(t *testing.T) {
	svc, core, fsys := startStalled(t, "SLOW", Options{})
	request(svc, "STREAM.CREATE.SLOW", "r.slow", createBody("SLOW", -1))
	<-fsys.entered

	lane := changeLane(apiPrefix + "STREAM.CREATE.SLOW")
	same, other := streamIn(lane, false), streamIn(lane, true)
	request(svc, "STREAM.CREATE."+same, "r.same", createBody(same, -1))
	request(svc, "STREAM.CREATE."+other, "r.other", createBody(other, -1))
	request(svc, "CONSUMER.CREATE."+other+".C", "r.consumer", fmt.Sprintf(`{"stream_name":%q,"config":{"name":"C","ack_policy":"explicit"}}`, other))
	request(svc, "INFO", "r.info", "")
	for _, reply := range []string{"r.other", "r.consumer", "r.info"} {
		if r := awaitAnswer(t, core, reply); r.Error != nil {
			t.Fatalf("%s: %+v", reply, r.Error)
		}
	}
	if _, ok := answer(core, "r.same"); ok {
		t.Fatalf("a change in the stalled lane ran before the change ahead of it")
	}
	if _, ok := answer(core, "r.slow"); ok {
		t.Fatalf("the stalled create answered while stalled")
	}

	close(fsys.release)
	for _, reply := range []string{"r.slow", "r.same"} {
		if r := awaitAnswer(t, core, reply); r.Error != nil {
			t.Fatalf("%s: %+v", reply, r.Error)
		}
	}
}

// Changes to one stream keep their order of arrival: a create, an
// update and a delete sent at once each find the stream as the one
// before left it, for many streams at once.
func TestChangesToOneStreamKeepTheirOrder(t *testing.T) {
	svc, core, _ := startStalled(t, "none", Options{})
	const n = 24
	for i := range n {
		name := fmt.Sprintf("O%d", i)
		request(svc, "STREAM.CREATE."+name, "c."+name, createBody(name, -1))
		request(svc, "STREAM.UPDATE."+name, "u."+name, fmt.Sprintf(`{"name":%q,"subjects":["%s.>"],"max_msgs":5}`, name, name))
		request(svc, "STREAM.DELETE."+name, "d."+name, "")
	}
	for i := range n {
		name := fmt.Sprintf("O%d", i)
		for _, reply := range []string{"c.", "u.", "d."} {
			if r := awaitAnswer(t, core, reply+name); r.Error != nil {
				t.Fatalf("%s%s: %+v", reply, name, r.Error)
			}
		}
	}
	if got := len(svc.sortedStreams()); got != 0 {
		t.Fatalf("%d streams left after their deletes", got)
	}
}

// Two creates in different lanes that each fit the storage limit alone,
// but not together: exactly one is created, the other refused 10047,
// however their reservations interleave.
func TestStorageReservationsOfConcurrentCreates(t *testing.T) {
	svc, core, fsys := startStalled(t, "SLOW", Options{MaxStorage: 1000})
	request(svc, "STREAM.CREATE.SLOW", "r.slow", createBody("SLOW", 600))
	<-fsys.entered
	other := streamIn(changeLane(apiPrefix+"STREAM.CREATE.SLOW"), true)
	request(svc, "STREAM.CREATE."+other, "r.other", createBody(other, 600))
	// The second waits for the first's reservation to take effect; let
	// the first finish.
	close(fsys.release)
	slow, second := awaitAnswer(t, core, "r.slow"), awaitAnswer(t, core, "r.other")
	if slow.Error != nil {
		t.Fatalf("first create: %+v", slow.Error)
	}
	if second.Error == nil || second.Error.ErrCode != 10047 {
		t.Fatalf("second create: %+v, want 10047", second.Error)
	}
}
