package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

// configFile is one config file a command reads, and its scope ("" for
// --config and MCPBRIDGE_CONFIG; the others: internal/scopes).
type configFile struct {
	path, scope string
}

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
func (e *env) configFiles(f *flags) []configFile {
	if f.config != "" {
		return []configFile{{path: f.config}}
	}
	if path := e.getenv("MCPBRIDGE_CONFIG"); path != "" {
		return []configFile{{path: path}}
	}
	var out []configFile
	for _, f := range scopes.Found(e.getenv) {
		out = append(out, configFile{f.Path, f.Scope})
	}
	return out
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

// readScopes reads and parses files and merges them into one plan
// (host.Merge: a later scope's entry replaces an earlier one's of its id). A file that cannot be read or is not a config at all stops
// everything (confpos.Errors, or the reading error); an invalid entry
// fails alone. skipMissing leaves out a file that is gone (a reload).
func (e *env) readScopes(files []configFile, cat *host.Catalog, skipMissing bool) (*host.Plan, error) {
	plans, err := e.readPlans(files, cat, skipMissing)
	if err != nil {
		return nil, err
	}
	return host.Merge(plans...), nil
}

// readPlans reads and parses files, one plan each, as readScopes does
// before it merges them.
func (e *env) readPlans(files []configFile, cat *host.Catalog, skipMissing bool) ([]*host.Plan, error) {
	var plans []*host.Plan
	for _, cf := range files {
		data, err := host.ReadConfigFile(cf.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && skipMissing:
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("config file %s does not exist", cf.path)
		case err != nil:
			return nil, err
		}
		plan, err := e.parseConfig(cf.path, data, cat)
		if err != nil {
			return nil, err
		}
		plans = append(plans, plan)
	}
	return plans, nil
}

// serversByFile names, for each of plans (one a file), the servers its
// entries define, whether a later file replaces them or not: the pins
// the lock beside that file keeps.
func serversByFile(plans []*host.Plan) map[string][]string {
	out := map[string][]string{}
	for _, p := range plans {
		for _, pe := range p.Entries {
			if pe.Entry.Name == clientkind.Name && pe.Spec.Name != "" {
				out[pe.Entry.File] = append(out[pe.Entry.File], pe.Spec.Name)
			}
		}
	}
	return out
}
