package conf

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// The resolver key: MEMORY (the account JWTs of resolver_preload only) or
// a block for nats-server's NATS resolvers, which keep account JWTs in a
// directory and take new ones over $SYS.REQ.CLAIMS.UPDATE:
//
//	resolver { type: full, dir: "./jwt", allow_delete: true, interval: "2m", limit: 1000, timeout: "1.9s" }
//	resolver { type: cache, dir: "./jwt", limit: 1000, ttl: "2m" }
//
// A URL resolver (resolver: URL(...)) is refused by name.

// The resolver types: Resolver.Type.
const (
	// ResolverFull keeps every account JWT pushed, in Dir.
	ResolverFull = "full"
	// ResolverCache keeps the Limit least recently used ones, each TTL.
	ResolverCache = "cache"
)

// Resolver is the resolver key: MEMORY, or the block with nats-server's
// keys; only Type is set for MEMORY.
type Resolver struct {
	// Type is ResolverMemory, ResolverFull or ResolverCache.
	Type string
	// Dir holds one file per account JWT, named by the account's public
	// key, as nats-server's resolver writes them.
	Dir string
	// AllowDelete lets the operator delete account JWTs
	// ($SYS.REQ.CLAIMS.DELETE); HardDelete removes their files instead
	// of renaming them to <key>.jwt.deleted. full only.
	AllowDelete, HardDelete bool
	// Interval is how often a full resolver compares its store with
	// other servers' (nothing to compare with on one server). full only.
	Interval time.Duration
	// Limit is the most JWTs the store holds; 0: nats-server's default
	// (none for full, 1000 for cache).
	Limit int64
	// TTL is how long a cache keeps a JWT; 0 for ever. cache only.
	TTL time.Duration
	// Timeout bounds a lookup from other servers (none on one server).
	Timeout time.Duration
}

// resolverValue binds the resolver key.
type resolverValue struct{ p **Resolver }

func (v resolverValue) set(raw any) error {
	switch r := raw.(type) {
	case string:
		s := strings.TrimSpace(r)
		switch {
		case strings.EqualFold(s, ResolverMemory) || strings.EqualFold(s, "MEM"):
			*v.p = &Resolver{Type: ResolverMemory}
			return nil
		case strings.HasPrefix(strings.ToUpper(s), "URL("):
			return fmt.Errorf("%q: bus has no URL resolver (an account server); use MEMORY or resolver { type: full, dir: ... }", s)
		}
		return fmt.Errorf("%q: a resolver is MEMORY or a block { type: full|cache, dir: ... }", s)
	case map[string]any:
		var bp blockParser
		res := bp.natsResolver(r)
		if len(bp.errs) > 0 {
			return bp.errs
		}
		*v.p = res
		return nil
	}
	return fmt.Errorf("%s: a resolver is MEMORY or a block { type: full|cache, dir: ... }", describe(raw))
}

func (v resolverValue) String() string {
	if *v.p == nil {
		return ""
	}
	return (*v.p).Type
}
func (v resolverValue) kind() string { return "string" }

// natsResolver parses the resolver block, refusing what nats-server
// refuses there (a key of the other type, no dir).
func (p *blockParser) natsResolver(m map[string]any) *Resolver {
	f := p.fields("", m, [][]string{{"type"}, {"dir"}, {"allow_delete"}, {"hard_delete"}, {"interval"}, {"limit"}, {"ttl"}, {"timeout"}})
	res := &Resolver{Type: strings.ToLower(strings.TrimSpace(p.str(".type", f["type"])))}
	if res.Type != ResolverFull && res.Type != ResolverCache {
		p.bad(".type", "%q: the type is full or cache", res.Type)
	}
	if res.Dir = strings.TrimSpace(p.str(".dir", f["dir"])); res.Dir == "" {
		p.bad(".dir", "dir has no value and needs to point to a directory")
	}
	hardDeleteSet := false
	for _, key := range slices.Sorted(maps.Keys(f)) {
		raw, path := f[key], "."+key
		switch key {
		case "allow_delete":
			res.AllowDelete = p.boolean(path, raw)
		case "hard_delete":
			res.HardDelete, hardDeleteSet = p.boolean(path, raw), true
		case "interval":
			res.Interval = p.duration(path, raw)
		case "ttl":
			res.TTL = p.duration(path, raw)
		case "timeout":
			res.Timeout = p.seconds(path, raw)
		case "limit":
			n, ok := number(raw)
			if !ok || n < 0 || n > math.MaxInt32 {
				p.bad(path, "%s is not a whole number of JWTs from 0 (the default) to %d", describe(raw), math.MaxInt32)
			}
			res.Limit = n
		}
	}
	// nats-server's words for keys of the other type.
	if res.Type == ResolverCache {
		for key, set := range map[string]bool{"interval": f["interval"] != nil, "allow_delete": res.AllowDelete, "hard_delete": hardDeleteSet} {
			if set {
				word := map[string]string{"interval": "sync"}[key]
				if word == "" {
					word = key
				}
				p.bad("."+key, "CACHE does not accept %s", word)
			}
		}
	} else {
		if f["ttl"] != nil {
			p.bad(".ttl", "FULL does not accept ttl")
		}
		if hardDeleteSet && !res.AllowDelete {
			p.bad(".hard_delete", "hard_delete has no effect without delete")
		}
	}
	return res
}
