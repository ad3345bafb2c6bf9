package scopes

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// env is a getenv over vars alone.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func write(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The user file follows XDG_CONFIG_HOME when it is absolute (a relative
// one is ignored, as the XDG spec says), else HOME; neither: none.
func TestUserPath(t *testing.T) {
	for _, c := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/mcpbridge/config.yaml"},
		{map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/mcpbridge/config.yaml"},
		{map[string]string{}, ""},
	} {
		if got := UserPath(env(c.vars)); got != c.want {
			t.Errorf("%v: %q, want %q", c.vars, got, c.want)
		}
	}
}

// A project file is found from a subdirectory up to the repository root,
// never above it; in the working directory it is named relatively.
func TestProjectPath(t *testing.T) {
	outer := t.TempDir()
	write(t, filepath.Join(outer, ProjectFile)) // above the repository: not its project's
	repo := filepath.Join(outer, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(repo, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	if got := ProjectPath(); got != "" {
		t.Errorf("a file above the repository root was taken: %q", got)
	}
	write(t, filepath.Join(repo, ProjectFile))
	if got, want := ProjectPath(), filepath.Join(repo, ProjectFile); got != want {
		t.Errorf("from a subdirectory: %q, want %q", got, want)
	}
	t.Chdir(repo)
	if got := ProjectPath(); got != ProjectFile {
		t.Errorf("in the working directory: %q, want %q", got, ProjectFile)
	}
}

// One project has one local file, from any of its directories and
// through a symbolic link; Found lists the files that exist in the order
// they merge.
func TestLocalPathAndFound(t *testing.T) {
	home := t.TempDir()
	get := env(map[string]string{"HOME": home})
	repo := t.TempDir()
	for _, dir := range []string{".git", "sub"} {
		if err := os.MkdirAll(filepath.Join(repo, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	local := LocalPath(get)
	t.Chdir(filepath.Join(link, "sub"))
	if got := LocalPath(get); got != local {
		t.Errorf("through a link, below: %q, want %q", got, local)
	}
	if got := Found(get); got != nil {
		t.Errorf("no files: %v", got)
	}
	write(t, local)
	write(t, UserPath(get))
	write(t, filepath.Join(repo, ProjectFile))
	want := []File{{Path: UserPath(get), Scope: User}, {Path: filepath.Join(link, ProjectFile), Scope: Project}, {Path: local, Scope: Local}}
	if d := cmp.Diff(want, Found(get)); d != "" {
		t.Errorf("Found (-want +got):\n%s", d)
	}
}
