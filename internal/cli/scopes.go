package cli

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

// userConfigPath is the user scope's file (scopes.UserPath), "" without
// a home.
func (e *env) userConfigPath() string { return scopes.UserPath(e.getenv) }

// exists reports whether path can be looked at.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// configFiles are the files a command reads: --config or MCPBRIDGE_CONFIG
// alone, else the files of the scopes that exist (none: the embedded
// default).
func (e *env) configFiles(f *flags) []scopes.File { return configsource.Files(f.config, e.getenv) }

// configReader reads config files with cat's kinds; another client's
// fields that could not be mapped are noted on stderr.
func (e *env) configReader(cat *host.Catalog) configsource.Reader {
	return configsource.Reader{Catalog: cat, Lookup: e.lookup, Notes: e.Stderr}
}

// defaultNotice says, on stderr, that no config file was found and where
// mcpbridge looked: a line, or a log record with --log-format json. With
// --json it says nothing (stderr stays quiet for scripts; status --json
// names the source).
func (e *env) defaultNotice(f *flags) {
	if f.json {
		return
	}
	where := "mcpbridge.yaml (here, or up to the repository root)"
	if p := e.userConfigPath(); p != "" {
		where += " or " + p
	}
	const msg = "no config file found: using the embedded demo config; 'mcpbridge add' creates one"
	if f.ops.logFormat == "json" {
		e.newLogger(f, slog.LevelInfo).Warn(msg, "looked for", where)
		return
	}
	fmt.Fprintf(e.Stderr, "mcpbridge: %s (looked for %s)\n", msg, where)
}
