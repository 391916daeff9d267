package conf

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/viper"
)

// fileFormat returns the viper format that parses a config file, chosen by
// its extension.
func fileFormat(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".yaml", ".yml":
		return "yaml", nil
	case ".toml":
		return "toml", nil
	case ".json":
		return "json", nil
	case ".conf":
		return "conf", nil // nats-server's syntax (natsconf.go)
	default:
		return "", fmt.Errorf("conf: config file %q: unknown format %q (want .conf, .yaml, .yml, .toml or .json)", path, ext)
	}
}

// readFile parses the config file at path into nested maps, keys
// lowercased. A file that is empty or holds only comments gives an empty
// map. Keys with no value (a bare "port:" in YAML) are left out, so they keep
// their defaults.
func readFile(path string) (map[string]any, error) {
	format, err := fileFormat(path)
	if err != nil {
		return nil, err
	}
	if format == "conf" {
		top, err := readConf(path)
		if err != nil {
			return nil, err
		}
		top = lowerKeys(top)
		// A nats-server config without jetstream runs without it, and
		// one without http or http_port serves no monitoring (bus's own
		// defaults are on, and 8222): a file brought over must not open
		// more than it did. -js and -m still turn them on.
		if _, ok := top["jetstream"]; !ok {
			top["jetstream"] = false
		}
		if !slices.ContainsFunc([]string{"http", "http_port", "monitor_port"}, func(k string) bool { _, ok := top[k]; return ok }) {
			top["http_port"] = 0
		}
		return top, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conf: read config: %w", err)
	}
	// JSON has no comments, but an empty file is still an empty config
	// rather than a syntax error.
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	v := viper.New()
	v.SetConfigType(format)
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("conf: parse %s: %w", path, err)
	}
	return v.AllSettings(), nil
}
