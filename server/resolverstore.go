package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// jwtStore is a NATS resolver's directory of account JWTs, laid out as
// nats-server's resolver lays it out (not sharded): one file per account,
// <public key>.jwt, holding the JWT alone, so a directory can move between
// bus and nats-server. A deleted JWT is renamed <key>.jwt.deleted, or
// removed with hard_delete. A cache keeps at most limit JWTs, dropping the
// least recently used one to take another, each for ttl after it was
// stored; a full store refuses one more past its limit. Safe for
// concurrent use; the files are written under mu, which nothing else
// waits for but the resolver's own goroutine and monitoring's lookups.
type jwtStore struct {
	dir   string
	cache bool
	limit int           // 0: none
	ttl   time.Duration // 0: for ever
	now   func() time.Time

	mu      sync.Mutex // guards the fields below and the files
	entries map[string]*storedJWT
	uses    uint64 // the clock of storedJWT.used
}

// storedJWT is one account's JWT in the store.
type storedJWT struct {
	jwt    string
	stored time.Time
	used   uint64 // when last stored or looked up, for the cache's order
}

// jwtFileSuffix and deletedSuffix name the store's files (a format shared
// with nats-server: never change them).
const (
	jwtFileSuffix = ".jwt"
	deletedSuffix = ".deleted"
)

// errStoreFull is the reference's error for a full store at its limit.
var errStoreFull = errors.New("jwt store is full")

// openJWTStore opens (creating it) r's directory and reads the JWTs in it.
func openJWTStore(r *Resolver, now func() time.Time) (*jwtStore, error) {
	if err := os.MkdirAll(r.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("server: resolver dir %q: %w", r.Dir, err)
	}
	st := &jwtStore{dir: r.Dir, cache: r.Type == ResolverCache, limit: int(r.Limit), ttl: r.TTL, now: now, entries: map[string]*storedJWT{}}
	if st.cache && st.limit == 0 {
		st.limit = defaultCacheLimit
	}
	files, err := os.ReadDir(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("server: resolver dir %q: %w", r.Dir, err)
	}
	for _, f := range files {
		key, ok := strings.CutSuffix(f.Name(), jwtFileSuffix)
		if !ok || f.IsDir() || !nkeys.IsValidPublicAccountKey(key) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.Dir, f.Name()))
		if err != nil {
			return nil, fmt.Errorf("server: resolver dir %q: %w", r.Dir, err)
		}
		info, err := f.Info()
		if err != nil {
			return nil, fmt.Errorf("server: resolver dir %q: %w", r.Dir, err)
		}
		st.uses++
		st.entries[key] = &storedJWT{jwt: strings.TrimSpace(string(data)), stored: info.ModTime(), used: st.uses}
	}
	return st, nil
}

// defaultCacheLimit is the reference's default limit of a cache.
const defaultCacheLimit = 1000

// all is every JWT the store holds now, by account key; the caller owns
// the map.
func (st *jwtStore) all() map[string]string {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	out := make(map[string]string, len(st.entries))
	for k, e := range st.entries {
		out[k] = e.jwt
	}
	return out
}

// keys lists the accounts the store holds, sorted.
func (st *jwtStore) keys() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	keys := make([]string, 0, len(st.entries))
	for k := range st.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// load is key's JWT, and whether the store has it; it counts as a use.
func (st *jwtStore) load(key string) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	e := st.entries[key]
	if e == nil {
		return "", false
	}
	st.uses++
	e.used = st.uses
	return e.jwt, true
}

// save stores token as key's JWT, whatever the store had. It reports
// the key a cache evicted to make room, or "".
func (st *jwtStore) save(key, token string) (evicted string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expireLocked()
	if st.entries[key] == nil && st.limit > 0 && len(st.entries) >= st.limit {
		if !st.cache {
			return "", errStoreFull
		}
		evicted = st.leastUsedLocked()
		if err := st.removeLocked(evicted, true); err != nil {
			return "", err
		}
	}
	if err := writeFileDurably(filepath.Join(st.dir, key+jwtFileSuffix), []byte(token)); err != nil {
		return evicted, err
	}
	st.uses++
	st.entries[key] = &storedJWT{jwt: token, stored: st.now(), used: st.uses}
	return evicted, nil
}

// saveIfNewer stores token unless the store has key's JWT issued later
// (or the same one), as the reference stores resolver_preload's JWTs.
func (st *jwtStore) saveIfNewer(key, token string) error {
	if old, ok := st.load(key); ok {
		oc, err1 := jwt.DecodeGeneric(old)
		nc, err2 := jwt.DecodeGeneric(token)
		if err1 == nil && err2 == nil && (oc.ID == nc.ID || oc.IssuedAt > nc.IssuedAt) {
			return nil
		}
	}
	_, err := st.save(key, token)
	return err
}

// remove deletes key's JWT: its file renamed to <key>.jwt.deleted, or
// removed when hard. A key the store lacks is no error.
func (st *jwtStore) remove(key string, hard bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.removeLocked(key, hard)
}

func (st *jwtStore) removeLocked(key string, hard bool) error {
	path := filepath.Join(st.dir, key+jwtFileSuffix)
	var err error
	if hard {
		err = os.Remove(path)
	} else {
		err = os.Rename(path, path+deletedSuffix)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	delete(st.entries, key)
	return syncDir(st.dir)
}

// leastUsedLocked is the key used least recently.
func (st *jwtStore) leastUsedLocked() string {
	var key string
	var oldest uint64
	for k, e := range st.entries {
		if key == "" || e.used < oldest {
			key, oldest = k, e.used
		}
	}
	return key
}

// expireLocked drops a cache's JWTs older than its ttl (their files
// too, as the reference's cache does), checked whenever the store is
// read: an expired JWT costs nothing until then.
func (st *jwtStore) expireLocked() {
	if !st.cache || st.ttl <= 0 {
		return
	}
	cutoff := st.now().Add(-st.ttl)
	for k, e := range st.entries {
		if e.stored.Before(cutoff) {
			_ = st.removeLocked(k, true) // a file that cannot go is tried again on the next read
		}
	}
}

// writeFileDurably writes data to path through a temporary file, synced
// and renamed over it, then syncs the directory: a crash leaves the old
// JWT or the new one, never a torn one.
func writeFileDurably(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes the directory's entries (a new or renamed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
