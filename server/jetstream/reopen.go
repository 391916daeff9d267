package jetstream

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// Live recovery of a fenced stream. A stream whose fsync or truncate
// failed (a read-only remount, a failing disk) stops accepting writes:
// what it would write next can no longer be trusted to reach the disk in
// order. It keeps serving reads, and /healthz names it (Fenced). Once its
// directory takes a synced write again, the stream is closed and opened
// from its files, as a restart would, on its own change lane, so the
// other streams never notice; what recovery finds is reported as at
// start. Until then nothing is retried but the probe. A stream that could
// not be opened at all because its directory was not writable is opened
// the same way once it is.

// fenceRetryEvery is how often fenced streams are probed: a second keeps
// the outage short, and with nothing fenced the check is a few atomic
// loads per stream.
const fenceRetryEvery = time.Second

// probeFile is the name written and removed in a fenced stream's
// directory to see whether it is writable again.
const probeFile = ".bus-probe"

// fenceWatch probes, until Shutdown, the fenced streams and those that
// could not be opened for want of a writable directory (a read-only
// store at start). One that failed for another reason (damaged files) is
// left to the operator: retrying it would fail the same way every second.
func (svc *Service) fenceWatch() {
	defer svc.workers.Done()
	ticker := time.NewTicker(fenceRetryEvery)
	defer ticker.Stop()
	backoff := reopenBackoff{}
	for {
		var now time.Time
		select {
		case now = <-ticker.C:
		case <-svc.stop:
			return
		}
		for _, st := range svc.sortedStreams() {
			if st.log.Err() == nil || !backoff.due(st.name, now) || svc.probe(st.dir) != nil {
				continue
			}
			backoff.tried(st.name, now)
			if !svc.runInLane(st.name, svc.reopen) {
				return
			}
		}
		for _, name := range svc.unwritableNames() {
			if !backoff.due(name, now) || svc.probe(filepath.Join(svc.dir, name)) != nil {
				continue
			}
			backoff.tried(name, now)
			if !svc.runInLane(name, svc.reload) {
				return
			}
		}
	}
}

// reopenBackoff spaces the reopenings of one stream: a disk whose fsyncs
// fail again and again would otherwise have its stream recovered from
// its files every second. The wait doubles from a second to about a
// minute while reopenings follow each other within reopenCalm, and
// starts over after that.
type reopenBackoff map[string]struct {
	next time.Time
	wait time.Duration
}

const (
	reopenMaxWait = 64 * time.Second
	reopenCalm    = 10 * time.Minute
)

func (b reopenBackoff) due(name string, now time.Time) bool {
	return !now.Before(b[name].next)
}

func (b reopenBackoff) tried(name string, now time.Time) {
	r := b[name]
	if r.wait == 0 || now.Sub(r.next) > reopenCalm {
		r.wait = fenceRetryEvery
	} else {
		r.wait = min(2*r.wait, reopenMaxWait)
	}
	r.next = now.Add(r.wait)
	b[name] = r
}

// runInLane queues fn(name) in the change lane of stream name; false if
// the service is shutting down.
func (svc *Service) runInLane(name string, fn func(string)) bool {
	r := apiRequest{run: func() { fn(name) }}
	select {
	case svc.changes[changeLane(apiPrefix+"STREAM.UPDATE."+name)] <- r:
		return true
	case <-svc.stop:
		return false
	}
}

// unwritableNames lists the streams that could not be opened for want of
// a writable directory.
func (svc *Service) unwritableNames() []string {
	svc.mu.Lock()
	defer svc.mu.Unlock()
	var names []string
	for name, d := range svc.damaged {
		if d.unwritable {
			names = append(names, name)
		}
	}
	return names
}

// damagedStream describes a stream that could not be opened because of
// err.
func damagedStream(name string, err error) DamagedStream {
	return DamagedStream{Name: name, Error: publicError(err), unwritable: notWritable(err)}
}

// notWritable reports whether err says a directory or file could not be
// written: read-only, not permitted, or out of space.
func notWritable(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.ENOSPC)
}

// reload opens a stream that could not be opened before; it runs on the
// stream's change lane.
func (svc *Service) reload(name string) {
	svc.mu.Lock()
	_, damaged := svc.damaged[name]
	svc.mu.Unlock()
	if !damaged {
		return // deleted meanwhile
	}
	st, err := svc.loadStream(filepath.Join(svc.dir, name))
	if err != nil {
		svc.mu.Lock()
		if _, ok := svc.damaged[name]; ok {
			svc.damaged[name] = damagedStream(name, err)
		}
		svc.mu.Unlock()
		svc.sh.log.Error("stream still cannot be opened; offline, its files are left as found", "stream", name, "err", err)
		return
	}
	svc.mu.Lock()
	_, damaged = svc.damaged[name]
	overlap := svc.overlapsOthers(name, st.cfg.Subjects)
	if damaged && !overlap {
		delete(svc.damaged, name)
		svc.streams[name] = st
		svc.own(name, st.cfg.Subjects)
	}
	svc.mu.Unlock()
	if !damaged || overlap {
		_ = st.close("409 Server Shutdown")
		if overlap {
			svc.sh.log.Error("stream can be opened again, but another stream took its subjects meanwhile; left offline", "stream", name)
		}
		return
	}
	st.loadConsumers()
	svc.sh.log.Warn("stream opened: its directory is writable again", "stream", name,
		"recovery", fmt.Sprintf("%+v", st.log.Recovery()))
}

// probe writes, syncs and removes a file in dir: nil once the directory
// takes synced writes again.
func (svc *Service) probe(dir string) error {
	name := filepath.Join(dir, probeFile)
	f, err := svc.sh.fs.Create(name)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte("probe"))
	serr := f.Sync()
	cerr := f.Close()
	rerr := svc.sh.fs.Remove(name)
	return errors.Join(werr, serr, cerr, rerr)
}

// reopen closes a fenced stream and opens it from its files, consumers
// and all; it runs on the stream's change lane. If the files cannot be
// opened now, the stream is taken offline and reported damaged, as one
// found so at start.
func (svc *Service) reopen(name string) {
	svc.mu.Lock()
	st := svc.streams[name]
	svc.mu.Unlock()
	if st == nil || st.log.Err() == nil {
		return // deleted, or already reopened
	}
	cause := publicError(st.log.Err())
	// Waiting pulls hear what the reference sends when a consumer moves
	// to another server: nats.go pulls again at once.
	if err := st.close("409 Leadership Change"); err != nil {
		svc.sh.log.Warn("closing a fenced stream", "stream", name, "err", err)
	}
	fresh, err := svc.loadStream(st.dir)
	svc.mu.Lock() // its deletion runs on this lane too: st is still the one registered
	if err != nil {
		delete(svc.streams, name)
		svc.disown(name, st.config().Subjects)
		svc.damaged[name] = damagedStream(name, err)
		svc.mu.Unlock()
		svc.sh.log.Error("fenced stream could not be reopened; offline, its files are left as found", "stream", name, "dir", st.dir, "err", err)
		return
	}
	svc.streams[name] = fresh
	svc.mu.Unlock()
	fresh.loadConsumers()
	svc.sh.log.Warn("fenced stream reopened: its directory is writable again", "stream", name, "was", cause,
		"recovery", fmt.Sprintf("%+v", fresh.log.Recovery()))
}
