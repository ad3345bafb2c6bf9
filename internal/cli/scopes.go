package cli

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
)

// The config scopes (docs/decisions.md §7): a user file, a project file
// found from the working directory up to the repository root, the user's
// own file for that project (local, Claude Code's default scope), or one
// file named by --config or MCPBRIDGE_CONFIG, which replaces them all.
const (
	scopeUser    = "user"
	scopeProject = "project"
	scopeLocal   = "local"
)

// configFile is one config file a command reads, and its scope ("" for
// --config and MCPBRIDGE_CONFIG).
type configFile struct {
	path, scope string
}

// userConfigPath is the user scope's file: $XDG_CONFIG_HOME/mcpbridge/
// config.yaml, else ~/.config/mcpbridge/config.yaml; "" without a home.
func (e *env) userConfigPath() string {
	if dir := e.getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "mcpbridge", "config.yaml")
	}
	if home := e.getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "mcpbridge", "config.yaml")
	}
	return ""
}

// projectConfigPath is the project scope's file: the first mcpbridge.yaml
// from the working directory up to the repository root (the directory
// holding .git), or in the working directory alone outside a repository.
// It is relative when in the working directory ("mcpbridge.yaml", as
// messages have always named it); "" when there is none.
func projectConfigPath() string {
	if exists(defaultConfigPath) {
		return defaultConfigPath
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	root := repoRoot(wd)
	if root == "" {
		return ""
	}
	for dir := wd; dir != root; {
		dir = filepath.Dir(dir)
		if p := filepath.Join(dir, defaultConfigPath); exists(p) {
			return p
		}
	}
	return ""
}

// localConfigPath is the local scope's file: the user's servers for this
// project alone, kept beside the user file (never in the project, so it is
// neither committed nor shared, and its lock is the user's too), under
// projects/ in a directory named for the project: its base name and a
// hash of its path. "" without a home.
func (e *env) localConfigPath() string {
	user := e.userConfigPath()
	if user == "" {
		return ""
	}
	dir := projectDir()
	sum := sha256.Sum256([]byte(dir))
	name := filepath.Base(dir) + "-" + hex.EncodeToString(sum[:6])
	return filepath.Join(filepath.Dir(user), "projects", name, "config.yaml")
}

// projectDir is the directory the local scope belongs to: the project
// file's, else the repository root, else the working directory; absolute,
// symbolic links resolved, so that one project has one local file however
// it is reached.
func projectDir() string {
	dir := ""
	if p := projectConfigPath(); p != "" {
		dir = filepath.Dir(p)
	} else if wd, err := os.Getwd(); err == nil {
		dir = cmp.Or(repoRoot(wd), wd)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// repoRoot is the nearest directory from dir up that holds .git, or "".
func repoRoot(dir string) string {
	for {
		if exists(filepath.Join(dir, ".git")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// configFiles are the files a command reads: --config or MCPBRIDGE_CONFIG
// alone, else the user and the project file that exist (none: the
// embedded default).
func (e *env) configFiles(f *flags) []configFile {
	if f.config != "" {
		return []configFile{{path: f.config}}
	}
	if path := e.getenv("MCPBRIDGE_CONFIG"); path != "" {
		return []configFile{{path: path}}
	}
	var out []configFile
	if p := e.userConfigPath(); p != "" && exists(p) {
		out = append(out, configFile{p, scopeUser})
	}
	if p := projectConfigPath(); p != "" {
		out = append(out, configFile{p, scopeProject})
	}
	if p := e.localConfigPath(); p != "" && exists(p) {
		out = append(out, configFile{p, scopeLocal})
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
