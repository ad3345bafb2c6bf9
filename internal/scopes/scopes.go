// Package scopes finds the config files mcpbridge reads when none is
// named (docs/decisions.md §7): a user file, a project file found from the
// working directory up to the repository root, and the user's own file for
// that project (local, Claude Code's default scope). A harness that reads
// the same servers as the CLI finds them here; a file named by --config or
// MCPBRIDGE_CONFIG replaces them all, and that choice is the caller's.
//
// Paths come from the environment given (a getenv function, so that tests
// and harnesses need not set the process's) and from the working
// directory.
package scopes

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// The scopes, as add --scope names them.
const (
	User    = "user"
	Project = "project"
	Local   = "local"
)

// ProjectFile is the project scope's file name.
const ProjectFile = "mcpbridge.yaml"

// File is one config file found, and its scope.
type File struct {
	Path, Scope string
	// Env is the variable that named the file ($MCPBRIDGE_CONFIG), for
	// messages about it; "" for a file found, or named by --config.
	Env string
}

// Found are the files of the three scopes that exist, in the order they
// merge (a later one's entry replaces an earlier one's of its id): user,
// project, local. None: the caller's default.
func Found(getenv func(string) string) []File {
	var out []File
	if p := UserPath(getenv); p != "" && exists(p) {
		out = append(out, File{Path: p, Scope: User})
	}
	if p := ProjectPath(); p != "" {
		out = append(out, File{Path: p, Scope: Project})
	}
	if p := LocalPath(getenv); p != "" && exists(p) {
		out = append(out, File{Path: p, Scope: Local})
	}
	return out
}

// UserPath is the user scope's file: $XDG_CONFIG_HOME/mcpbridge/
// config.yaml, else ~/.config/mcpbridge/config.yaml; "" without a home.
func UserPath(getenv func(string) string) string {
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "mcpbridge", "config.yaml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "mcpbridge", "config.yaml")
	}
	return ""
}

// ProjectPath is the project scope's file: the first mcpbridge.yaml from
// the working directory up to the repository root (the directory holding
// .git), or in the working directory alone outside a repository. It is
// relative when in the working directory ("mcpbridge.yaml", as messages
// have always named it); "" when there is none.
func ProjectPath() string {
	if exists(ProjectFile) {
		return ProjectFile
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
		if p := filepath.Join(dir, ProjectFile); exists(p) {
			return p
		}
	}
	return ""
}

// LocalPath is the local scope's file: the user's servers for this
// project alone, kept beside the user file (never in the project, so it is
// neither committed nor shared, and its lock is the user's too), under
// projects/ in a directory named for the project: its base name and a
// hash of its path. "" without a home.
func LocalPath(getenv func(string) string) string {
	user := UserPath(getenv)
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
	if p := ProjectPath(); p != "" {
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
