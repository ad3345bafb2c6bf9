package cli

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// defaultConfig runs the demo server inside this binary, so mcpbridge does
// its job out of the box (DECISIONS §3).
//
//go:embed default.yaml
var defaultConfig []byte

// defaultConfigPath is read when neither --config nor MCPBRIDGE_CONFIG is
// given.
const defaultConfigPath = "mcpbridge.yaml"

// entry is one configured MCP server.
type entry struct {
	id  string
	cfg mcpclient.Config
}

// source is where the servers come from, for messages.
type source struct {
	name    string // file name, "--url", or "embedded default"
	entries []entry
}

// loadSource resolves SOURCE: --url, --config, MCPBRIDGE_CONFIG,
// ./mcpbridge.yaml, or the embedded default, in that order.
func (e *env) loadSource(f *flags) (*source, error) {
	if f.url != "" {
		headers, err := parseHeaders(f.headers)
		if err != nil {
			return nil, err
		}
		name := f.name
		if name == "" {
			name = "remote"
		}
		cfg := mcpclient.Config{
			ServerName: name,
			Transport:  mcpclient.TransportStreamableHTTP,
			URL:        f.url,
			Headers:    headers,
		}
		if err := cfg.Validate(); err != nil {
			return nil, usagef("--url: %v", err)
		}
		return &source{name: "--url", entries: []entry{{id: name, cfg: cfg}}}, nil
	}
	path := f.config
	if path == "" {
		path = e.getenv("MCPBRIDGE_CONFIG")
	}
	if path == "" {
		if _, err := os.Stat(defaultConfigPath); err == nil {
			path = defaultConfigPath
		}
	}
	if path == "" {
		return parseSource("embedded default", defaultConfig, e.lookup)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &configError{fmt.Errorf("config file %s does not exist", path)}
		}
		return nil, &configError{fmt.Errorf("reading config: %w", err)}
	}
	return parseSource(path, data, e.lookup)
}

// configError is a bad config file: exit status 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// parseSource parses and validates a composition file: every problem of
// every entry is reported, with file, line and entry.
func parseSource(name string, data []byte, lookup func(string) (string, bool)) (*source, error) {
	entries, err := host.ParseEntries(name, data)
	if err != nil {
		return nil, &configError{err}
	}
	src := &source{name: name}
	var errs []error
	seen := map[string]host.Entry{}
	for _, en := range entries {
		if en.Disabled {
			continue
		}
		if en.Name != mcpclient.PluginName {
			errs = append(errs, host.EntryError(name, en, "name", fmt.Sprintf("unknown plugin %q (known: %s)", en.Name, mcpclient.PluginName)))
			continue
		}
		cfg, err := mcpclient.DecodeConfig(en.Config, lookup)
		if err != nil {
			errs = append(errs, host.FormatErrors(name, en, err))
			continue
		}
		if prev, dup := seen[cfg.ServerName]; dup {
			errs = append(errs, host.EntryError(name, en, "config.serverName",
				fmt.Sprintf("serverName %q is already used by entry %q (line %d); every server needs its own", cfg.ServerName, prev.ID, prev.Line)))
			continue
		}
		seen[cfg.ServerName] = en
		src.entries = append(src.entries, entry{id: en.ID, cfg: cfg})
	}
	if len(errs) > 0 {
		return nil, &configError{errors.Join(errs...)}
	}
	return src, nil
}
