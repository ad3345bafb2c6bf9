// Package configsource reads the config a command runs: which files (the
// one named, else the scopes found, internal/scopes), each parsed with a
// catalog's kinds (mcpbridge YAML, or another client's config converted
// by internal/importconf, its errors at the file's own positions), and
// their plans merged by id (host.Merge). An entry whose config is invalid
// stays in the plan, to fail alone.
package configsource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

// EnvConfig names the one config file to read instead of the scopes'.
const EnvConfig = "MCPBRIDGE_CONFIG"

// Files are the files a command reads: named (--config) or $EnvConfig
// alone, with no scope, else the files of the scopes that exist (none:
// the caller's default).
func Files(named string, getenv func(string) string) []scopes.File {
	if named != "" {
		return []scopes.File{{Path: named}}
	}
	if path := getenv(EnvConfig); path != "" {
		return []scopes.File{{Path: path, Env: EnvConfig}}
	}
	return scopes.Found(getenv)
}

// Paths are the paths of files.
func Paths(files []scopes.File) []string {
	out := make([]string, 0, len(files))
	for _, cf := range files {
		out = append(out, cf.Path)
	}
	return out
}

// Reader reads config files with Catalog's kinds, expanding ${VAR} with
// Lookup. Notes, when set, receives a line for each field of another
// client's config that could not be mapped.
type Reader struct {
	Catalog *host.Catalog
	Lookup  func(string) (string, bool)
	Notes   io.Writer
}

// Merged reads and parses files and merges them into one plan
// (host.Merge: a later scope's entry replaces an earlier one's of its
// id). A file that cannot be read or is not a config at all stops
// everything (confpos.Errors, or the reading error); an invalid entry
// fails alone.
func (r Reader) Merged(files []scopes.File) (*host.Plan, error) {
	plans, err := r.Plans(files, nil)
	if err != nil {
		return nil, err
	}
	return host.Merge(plans...), nil
}

// Plans reads and parses files, one plan each, as Merged does before it
// merges them. last, at a reload, holds the plans of the previous read of
// files, one each: a file gone since keeps its last plan, so that its
// entries run on until it comes back. Without last, a file gone is an
// error.
func (r Reader) Plans(files []scopes.File, last []*host.Plan) ([]*host.Plan, error) {
	plans := make([]*host.Plan, 0, len(files))
	for i, cf := range files {
		data, err := host.ReadConfigFile(cf.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && i < len(last):
			plans = append(plans, last[i])
			continue
		case errors.Is(err, fs.ErrNotExist):
			return nil, missing(cf)
		case err != nil:
			return nil, err
		}
		plan, err := r.Parse(cf.Path, data)
		if err != nil {
			return nil, err
		}
		plans = append(plans, plan)
	}
	return plans, nil
}

// missing is the error of cf, a file that does not exist; one a variable
// names is said to be named there, since nothing on the command line is.
func missing(cf scopes.File) error {
	what := absent(cf.Path)
	switch {
	case cf.Env != "":
		what = fmt.Sprintf(", named by $%s, %s: correct the variable, or unset it to read the user and project configs (or, with none, the embedded demo)", cf.Env, what)
	case what == doesNotExist:
		what = fmt.Sprintf(" %s: correct the path, or create it (mcpbridge add --config %s NAME -- COMMAND)", what, cf.Path)
	default:
		what = " " + what
	}
	return &notThere{fmt.Errorf("config file %s%s", cf.Path, what)}
}

// notThere is a config file missing: a file that cannot be read, not an
// invalid config (errors.Is fs.ErrNotExist).
type notThere struct{ error }

func (e *notThere) Unwrap() []error { return []error{e.error, fs.ErrNotExist} }

// doesNotExist is what is said of a path with nothing at it.
const doesNotExist = "does not exist"

// absent says why path, which cannot be opened for want of a file, is
// not there: "does not exist", or, for a symbolic link whose target is
// gone, which target (at the end of a chain of links) is.
func absent(path string) string {
	target := path
	for range 40 { // the kernel's limit of links followed
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		next, err := os.Readlink(target)
		if err != nil {
			break
		}
		if !filepath.IsAbs(next) {
			next = filepath.Join(filepath.Dir(target), next)
		}
		target = next
	}
	if target == path {
		return doesNotExist
	}
	return fmt.Sprintf("is a symbolic link to %s, which does not exist: restore %s, or point the link at the config file (ln -sfn FILE %s)", target, target, path)
}

// ServersByFile names, for each of plans (one a file), the servers its
// entries define, whether a later file replaces them or not, disabled
// ones included: the pins the lock beside that file keeps (a server
// disabled for a while finds its pins when it is enabled again).
func ServersByFile(plans []*host.Plan) map[string][]string {
	out := map[string][]string{}
	for _, p := range plans {
		for _, pe := range p.Entries {
			name := pe.Spec.Name
			if name == "" && pe.Entry.Disabled {
				name = host.DisplayName(pe.Entry)
			}
			if pe.Entry.Name == clientkind.Name && name != "" {
				out[pe.Entry.File] = append(out[pe.Entry.File], name)
			}
		}
	}
	return out
}
