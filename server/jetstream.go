package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bus-dev/bus/jetlog"
)

// apiPrefix is where JetStream API requests arrive.
const apiPrefix = "$JS.API."

// jetStream is the persistence layer: the streams, their consumers and
// the API that manages them. API requests are handled one at a time on
// its own goroutine, so a slow disk never stalls a client's reader.
type jetStream struct {
	srv *Server
	dir string
	log *slog.Logger

	mu      sync.Mutex // guards streams
	streams map[string]*stream

	apiSub *subscription
	reqs   chan apiRequest
	stop   chan struct{}
	done   chan struct{}

	apiTotal, apiErrors atomic.Int64
	deadLettered        atomic.Int64 // messages given up on, all consumers
}

// apiRequest is a copied API request waiting for the API goroutine.
type apiRequest struct {
	subject string
	reply   string
	hdr     []byte
	body    []byte
}

// startJetStream opens every stream under dir and starts serving the API.
func (s *Server) startJetStream() error {
	js := &jetStream{
		srv:     s,
		dir:     filepath.Join(s.opts.StoreDir, "jetstream"),
		log:     s.log.With("component", "jetstream"),
		streams: map[string]*stream{},
		reqs:    make(chan apiRequest, 1024),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if err := os.MkdirAll(js.dir, 0o755); err != nil {
		return fmt.Errorf("server: jetstream store %s: %w", js.dir, err)
	}
	if err := js.loadStreams(); err != nil {
		js.closeStreams()
		return err
	}
	sub, err := s.subscribeInternal(apiPrefix+">", js.captureRequest)
	if err != nil {
		js.closeStreams()
		return err
	}
	js.apiSub = sub
	s.js = js
	go js.run()
	js.log.Info("jetstream enabled", "store_dir", js.dir, "streams", len(js.streams))
	return nil
}

// loadStreams reopens the streams found in the store directory.
func (js *jetStream) loadStreams() error {
	entries, err := os.ReadDir(js.dir)
	if err != nil {
		return fmt.Errorf("server: read %s: %w", js.dir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(js.dir, e.Name())
		lcfg, _, err := jetlog.LoadConfig(nil, dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("server: stream in %s: %w", dir, err)
		}
		var cfg streamConfig
		if err := json.Unmarshal(lcfg.Raw, &cfg); err != nil {
			return fmt.Errorf("server: stream config in %s: %w", dir, err)
		}
		st, err := js.openStream(cfg, dir)
		if err != nil {
			return fmt.Errorf("server: open stream %s: %w", cfg.Name, err)
		}
		js.streams[cfg.Name] = st
		if err := st.loadConsumers(); err != nil {
			return fmt.Errorf("server: consumers of stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// captureRequest queues an API request. MSG.NEXT belongs to each pull
// consumer's own subscription: declining it here lets a pull for a missing
// consumer get the no-responders status, as with the reference.
func (js *jetStream) captureRequest(subject, reply []byte, hdr int, msg []byte) bool {
	if strings.HasPrefix(string(subject), apiPrefix+"CONSUMER.MSG.NEXT.") {
		return false
	}
	r := apiRequest{subject: string(subject), reply: string(reply)}
	buf := append([]byte(nil), msg...)
	if hdr >= 0 {
		r.hdr, r.body = buf[:hdr:hdr], buf[hdr:]
	} else {
		r.body = buf
	}
	select {
	case js.reqs <- r:
	case <-js.stop:
	}
	return true
}

func (js *jetStream) run() {
	defer close(js.done)
	for {
		select {
		case r := <-js.reqs:
			js.handle(r)
		case <-js.stop:
			return
		}
	}
}

// respond sends an API response; v is marshalled to JSON.
func (js *jetStream) respond(reply string, v any) {
	if reply == "" {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		js.log.Error("encode api response", "err", err)
		return
	}
	js.srv.sendInternal(reply, "", nil, b)
}

// apiResponse is the envelope of every error response.
type apiResponse struct {
	Type  string    `json:"type"`
	Error *apiError `json:"error,omitempty"`
}

func (js *jetStream) respondErr(reply, typ string, e *apiError) {
	js.apiErrors.Add(1)
	js.respond(reply, apiResponse{Type: typ, Error: e})
}

// shutdown stops the API and closes every stream.
func (js *jetStream) shutdown() {
	js.srv.unsubscribeInternal(js.apiSub)
	close(js.stop)
	<-js.done
	js.closeStreams()
}

func (js *jetStream) closeStreams() {
	js.mu.Lock()
	streams := js.streams
	js.streams = map[string]*stream{}
	js.mu.Unlock()
	for _, st := range streams {
		if err := st.closeWith("409 Server Shutdown"); err != nil {
			js.log.Error("close stream", "stream", st.name, "err", err)
		}
	}
}

func (js *jetStream) stream(name string) *stream {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.streams[name]
}

// sortedStreams returns the streams ordered by name.
func (js *jetStream) sortedStreams() []*stream {
	js.mu.Lock()
	out := make([]*stream, 0, len(js.streams))
	for _, st := range js.streams {
		out = append(out, st)
	}
	js.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}
