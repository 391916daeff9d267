package conf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// Mappings is the mappings block (nats-server's "mappings", or "maps"):
// subjects that a client's publish is routed to instead of its own. Only
// the shape is checked here (strings, weights, totals); the subjects and
// transforms are checked by the server, which names the entry.
type Mappings struct {
	Entries []Mapping // sorted by Source
}

// Mapping is one entry: a published subject matching Source goes to one of
// Destinations.
type Mapping struct {
	Source       string
	Destinations []MapDestination
}

// MapDestination is one destination of a mapping. The plain form
// ("src": "dest") is one destination of weight 100.
type MapDestination struct {
	Subject string // a transform destination, "$1" and {{...}} included
	Weight  int    // percent of the messages, 0..100
	// Cluster scopes the destination to a cluster, as in nats-server;
	// bus has no cluster, so the server ignores such destinations as
	// nats-server does those of other clusters.
	Cluster string
}

// mappingsValue binds the mappings block. Its subjects are keys of the
// block, and subjects are case-sensitive and dotted, which viper's key
// handling would fold and split; so Load hands set the block read from
// the file directly (readRawBlock), not viper's copy.
type mappingsValue struct{ p **Mappings }

func (v mappingsValue) set(raw any) error {
	var bp blockParser
	m := bp.mappings(raw)
	if len(bp.errs) > 0 {
		return bp.errs
	}
	*v.p = m
	return nil
}

func (v mappingsValue) String() string {
	if *v.p == nil {
		return ""
	}
	return "{…}"
}

func (v mappingsValue) kind() string { return "block" }

// mappings parses the block: a map from source subject to a destination,
// a {destination, weight} map or a list of them.
func (p *blockParser) mappings(raw any) *Mappings {
	m, ok := p.block("", raw)
	if !ok {
		return nil
	}
	out := &Mappings{Entries: []Mapping{}}
	for _, src := range slices.Sorted(maps.Keys(m)) {
		path := "." + strconv.Quote(src)
		if strings.TrimSpace(src) == "" {
			p.bad(path, "a source subject must not be empty")
			continue
		}
		var dests []MapDestination
		switch v := m[src].(type) {
		case string:
			dests = []MapDestination{{Subject: v, Weight: 100}}
		case map[string]any:
			if d, ok := p.mapDestination(path, v); ok {
				dests = []MapDestination{d}
			}
		case []any:
			for i, entry := range v {
				epath := fmt.Sprintf("%s[%d]", path, i)
				em, ok := p.block(epath, entry)
				if !ok {
					continue
				}
				if d, ok := p.mapDestination(epath, em); ok {
					dests = append(dests, d)
				}
			}
		default:
			p.bad(path, "%s is not a destination subject, a {destination, weight} map or a list of them", describe(v))
			continue
		}
		p.checkWeights(path, dests)
		out.Entries = append(out.Entries, Mapping{Source: src, Destinations: dests})
	}
	return out
}

// mapDestination reads {destination, weight[, cluster]}; nats-server
// requires the weight.
func (p *blockParser) mapDestination(path string, m map[string]any) (MapDestination, bool) {
	before := len(p.errs)
	f := p.fields(path, m, [][]string{{"destination", "dest"}, {"weight"}, {"cluster"}})
	var d MapDestination
	if v, ok := f["destination"]; ok {
		d.Subject = p.str(path+".destination", v)
	}
	if d.Subject == "" && len(p.errs) == before {
		p.bad(path, "needs a destination")
	}
	if v, ok := f["cluster"]; ok {
		d.Cluster = p.str(path+".cluster", v)
	}
	v, ok := f["weight"]
	if !ok {
		p.bad(path, "needs a weight (a percentage such as 40%%)")
	} else {
		d.Weight = p.weight(path+".weight", v)
	}
	return d, len(p.errs) == before
}

// weight reads a percentage: 40, "40" or "40%", 0..100.
func (p *blockParser) weight(path string, raw any) int {
	var n int64
	ok := false
	if s, isString := raw.(string); isString {
		i, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		n, ok = int64(i), err == nil
	} else {
		n, ok = number(raw)
	}
	if !ok || n < 0 || n > 100 {
		p.bad(path, "%s is not a weight from 0%% to 100%%", describe(raw))
		return 0
	}
	return int(n)
}

// checkWeights applies nats-server's rules to one mapping's destinations:
// each destination once, and at most 100% in total per cluster (the
// destinations without one being one group).
func (p *blockParser) checkWeights(path string, dests []MapDestination) {
	seen := map[string]bool{}
	total := map[string]int{}
	for _, d := range dests {
		if seen[d.Subject] {
			p.bad(path, "destination %q is listed twice", d.Subject)
		}
		seen[d.Subject] = true
		total[d.Cluster] += d.Weight
	}
	for _, cluster := range slices.Sorted(maps.Keys(total)) {
		if total[cluster] <= 100 {
			continue
		}
		if cluster == "" {
			p.bad(path, "weights add up to %d%%, more than 100%%", total[cluster])
		} else {
			p.bad(path, "weights for cluster %q add up to %d%%, more than 100%%", cluster, total[cluster])
		}
	}
}

// readRawBlock decodes the config file at path again, this time keeping
// the case and the dots of every key, and returns the top-level block
// named by one of names (matched without regard to case, as the file's
// other keys are). viper lowercases keys and splits them at dots, which
// is right for settings but wrong for the subjects that key the mappings
// block.
func readRawBlock(path string, names ...string) (any, bool, error) {
	format, err := fileFormat(path)
	if err != nil {
		return nil, false, err
	}
	var top map[string]any
	var data []byte
	if format == "conf" {
		if top, err = readConf(path); err != nil {
			return nil, false, err
		}
	} else if data, err = os.ReadFile(path); err != nil {
		return nil, false, fmt.Errorf("conf: read config: %w", err)
	}
	switch format {
	case "yaml":
		err = yaml.Unmarshal(data, &top)
	case "toml":
		err = toml.Unmarshal(data, &top)
	case "json":
		if len(bytes.TrimSpace(data)) > 0 {
			err = json.Unmarshal(data, &top)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("conf: parse %s: %w", path, err)
	}
	for k, v := range top {
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, k) }) {
			return v, true, nil
		}
	}
	return nil, false, nil
}

// loadMappings takes the mappings block out of a file's normalized
// settings, so that viper never sees it, and sets cfg.Mappings from the
// block as written in the file at path.
func loadMappings(path string, normal map[string]any, cfg *Config) ([]*KeyError, error) {
	if _, ok := normal["mappings"]; !ok {
		return nil, nil
	}
	delete(normal, "mappings")
	raw, _, err := readRawBlock(path, "mappings", "maps")
	if err != nil {
		return nil, err
	}
	source := "file " + path
	err = mappingsValue{&cfg.Mappings}.set(raw)
	if err == nil {
		return nil, nil
	}
	nested := asNested(err)
	if nested == nil {
		return []*KeyError{{Key: "mappings", Source: source, Reason: err.Error(), Err: ErrBadValue}}, nil
	}
	errs := make([]*KeyError, 0, len(nested))
	for _, ne := range nested {
		errs = append(errs, &KeyError{Key: "mappings" + ne.path, Source: source, Reason: ne.reason, Err: ne.err})
	}
	return errs, nil
}
