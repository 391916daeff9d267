package conf

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Load builds the configuration from, lowest precedence first, Default, the
// file at path (skipped when path is ""), BUS_* environment variables and
// the flags that AddFlags registered on fs (fs may be nil), then validates
// it.
//
// On failure it returns the zero Config and an error: either one about the
// file itself (missing, unknown extension, syntax), or every problem with
// keys joined, each a *KeyError.
func Load(path string, fs *pflag.FlagSet) (Config, error) {
	cfg := Default()
	ks := newKeySet(&cfg)
	v := viper.New()
	var errs []*KeyError

	inFile := map[string]bool{}
	if path != "" {
		settings, err := readFile(path)
		if err != nil {
			return Config{}, err
		}
		settings, natsErrs, _ := natsKeys(settings, "file "+path) // the tuning keys: IgnoredKeys
		errs = append(errs, natsErrs...)
		normal, fileErrs := ks.normalize(settings, "", "file "+path)
		errs = append(errs, fileErrs...)
		mappingErrs, err := loadMappings(path, normal, &cfg) // viper would fold its subjects
		if err != nil {
			return Config{}, err
		}
		errs = append(errs, mappingErrs...)
		preloadErrs, err := loadPreload(path, normal, &cfg) // viper would fold account keys
		if err != nil {
			return Config{}, err
		}
		errs = append(errs, preloadErrs...)
		accountErrs, err := loadAccounts(path, normal, &cfg) // viper would fold account names
		if err != nil {
			return Config{}, err
		}
		errs = append(errs, accountErrs...)
		for name := range normal {
			inFile[name] = true
		}
		if err := v.MergeConfigMap(normal); err != nil {
			return Config{}, err // only for a nil map, which normalize never returns
		}
	}

	errs = append(errs, ks.unknownEnv()...)
	for _, k := range ks.list {
		if k.fileOnly {
			continue
		}
		// BUS_PORT=tcp://… is Kubernetes', not a port: it is not bound,
		// but the key's flag still is.
		if !isServiceLink(k.env(), os.Getenv(k.env())) {
			if err := v.BindEnv(k.name, k.env()); err != nil {
				return Config{}, err // only for a missing name
			}
		}
		if fs == nil {
			continue
		}
		if f := fs.Lookup(k.flag()); f != nil {
			if err := v.BindFlagValue(k.name, rawFlag{f}); err != nil {
				return Config{}, err // only for a nil flag
			}
		}
	}

	// source says where the value of a key came from, mirroring viper's
	// precedence; "" means the default.
	flagChanged := func(k key) bool {
		if fs == nil {
			return false
		}
		f := fs.Lookup(k.flag())
		return f != nil && f.Changed
	}
	source := func(name string) string {
		k, ok := ks.byName[name]
		switch {
		case !ok:
			return ""
		case flagChanged(k):
			return "flag --" + k.flag()
		case os.Getenv(k.env()) != "" && !isServiceLink(k.env(), os.Getenv(k.env())):
			return "env " + k.env()
		case inFile[strings.SplitN(name, ".", 2)[0]]:
			return "file " + path
		}
		return ""
	}

	for _, k := range ks.list {
		if !v.IsSet(k.name) {
			continue
		}
		if err := k.value.set(v.Get(k.name)); err != nil {
			nested := asNested(err)
			if nested == nil {
				errs = append(errs, &KeyError{Key: k.name, Source: source(k.name), Reason: err.Error(), Err: ErrBadValue})
				continue
			}
			for _, ne := range nested {
				errs = append(errs, &KeyError{Key: k.name + ne.path, Source: source(k.name), Reason: ne.reason, Err: ne.err})
			}
		}
	}
	errs = append(errs, natsFlags(fs, &cfg)...)
	for _, err := range cfg.check() {
		// A key that failed to parse kept its default; do not also
		// report the default as out of range.
		if slices.ContainsFunc(errs, func(e *KeyError) bool { return e.Key == err.Key }) {
			continue
		}
		err.Source = source(err.Key)
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		ks.sort(errs)
		return Config{}, join(errs)
	}
	return cfg, nil
}

// normalize checks the keys of a parsed file against ks, returning a copy
// with aliases renamed to their keys, and an error for every unknown or
// duplicated key. prefix is the section being walked ("" at the top, then
// "tls." and so on).
func (ks keySet) normalize(settings map[string]any, prefix, source string) (map[string]any, []*KeyError) {
	out := map[string]any{}
	var errs []*KeyError
	for _, name := range slices.Sorted(maps.Keys(settings)) {
		val, full := settings[name], prefix+name
		if canonical, ok := ks.aliasOf[full]; ok {
			_, canonicalSet := settings[strings.TrimPrefix(canonical, prefix)]
			if _, taken := out[strings.TrimPrefix(canonical, prefix)]; canonicalSet || taken {
				errs = append(errs, &KeyError{Key: full, Source: source,
					Reason: "is another name for " + canonical + ", which is also set", Err: ErrDuplicateKey})
				continue
			}
			full, name = canonical, strings.TrimPrefix(canonical, prefix)
		}
		if _, ok := ks.byName[full]; ok {
			out[name] = val
			continue
		}
		if section, ok := val.(map[string]any); ok && ks.isSection(full) {
			inner, innerErrs := ks.normalize(section, full+".", source)
			out[name] = inner
			errs = append(errs, innerErrs...)
			continue
		}
		errs = append(errs, &KeyError{Key: full, Source: source, Reason: hint(full, ks.names()), Err: ErrUnknownKey})
	}
	return out, errs
}

// unknownEnv reports every non-empty BUS_* environment variable that names
// no key. Empty ones are ignored, as viper ignores them for known keys.
// IgnoredEnv lists the BUS_* environment variables that Load ignores
// because they are Kubernetes service links, not settings
// (servicelinks.go), sorted, so that the caller can warn about them.
func IgnoredEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "BUS_") && isServiceLink(name, val) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (ks keySet) unknownEnv() []*KeyError {
	var errs []*KeyError
	for _, kv := range os.Environ() {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BUS_") || val == "" {
			continue
		}
		if isServiceLink(name, val) {
			continue // see servicelinks.go and IgnoredEnv
		}
		if _, ok := ks.byEnv[name]; !ok {
			errs = append(errs, &KeyError{Key: name, Source: "environment", Reason: hint(name, ks.envNames()), Err: ErrUnknownKey})
		}
	}
	slices.SortFunc(errs, func(a, b *KeyError) int { return strings.Compare(a.Key, b.Key) })
	return errs
}

// sort orders errors as a reader checks them: unknown and duplicate keys
// first, as found, then the others in the order of keys.
func (ks keySet) sort(errs []*KeyError) {
	rank := func(e *KeyError) int {
		if !errors.Is(e.Err, ErrBadValue) && !errors.Is(e.Err, ErrOutOfRange) {
			return -1
		}
		return slices.IndexFunc(ks.list, func(k key) bool { return k.name == e.Key })
	}
	slices.SortStableFunc(errs, func(a, b *KeyError) int { return rank(a) - rank(b) })
}
