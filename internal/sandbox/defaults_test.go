package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRuntimeDirs(t *testing.T) {
	const home = "/home/ann"
	tests := []struct {
		name, path string
		want       []string
	}{
		{"system program", "/usr/bin/node", []string{"/usr/bin", "/usr"}},
		{"an installation prefix", "/opt/node-v22/bin/npx", []string{"/opt/node-v22/bin", "/opt/node-v22"}},
		{"never the root", "/bin/no-such-program", []string{"/bin"}},
		{"no prefix inside home", home + "/.local/bin/uvx", []string{home + "/.local/bin"}},
		{"an npm bin: its node_modules", "/srv/app/node_modules/@scope/server/dist/index.js",
			[]string{"/srv/app/node_modules/@scope/server/dist", "/srv/app/node_modules"}},
		{"never home itself", home + "/server", nil},
		{"nor an ancestor of home", "/home/server", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runtimeDirs(tt.path, home)); diff != "" {
				t.Errorf("runtimeDirs(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// A home reached through a symlink (/home → /var/home, a home moved to
// another disk) is home by either name: a program under it, resolved
// through the link, opens its own directory, never home or its parent.
// The resolved directory's prefix was not recognised as home's, and
// home itself (with ~/.ssh) became readable.
func TestRuntimeDirsHomeThroughASymlink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "data", "ann")
	link := filepath.Join(t.TempDir(), "ann")
	if err := os.MkdirAll(filepath.Join(real, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "bin", "server"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	got := runtimeDirs(filepath.Join(link, "bin", "server"), link)
	if want := []string{filepath.Join(link, "bin"), filepath.Join(real, "bin")}; !slices.Equal(got, want) {
		t.Errorf("runtimeDirs through the link = %q, want %q (never %s)", got, want, real)
	}
}

func TestCacheDirs(t *testing.T) {
	const home = "/home/ann"
	tests := []struct {
		name, command string
		env           []string
		want          []string
	}{
		{"npx", "npx", nil, []string{home + "/.npm"}},
		{"npx by path, cache moved", "/usr/local/bin/npx", []string{"npm_config_cache=/var/cache/npm"}, []string{"/var/cache/npm"}},
		{"uvx", "uvx", nil, []string{home + "/.cache/uv", home + "/.local/share/uv"}},
		{"uvx with XDG dirs", "uvx", []string{"XDG_CACHE_HOME=/c", "XDG_DATA_HOME=/d"}, []string{"/c/uv", "/d/uv"}},
		{"uv with its own variables", "uv", []string{"UV_CACHE_DIR=/uc", "UV_PYTHON_INSTALL_DIR=/up"}, []string{"/uc", "/up"}},
		{"a relative cache is ignored", "npx", []string{"npm_config_cache=rel"}, nil},
		{"anything else", "node", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, cacheDirs(tt.command, tt.env, home)); diff != "" {
				t.Errorf("cacheDirs (-want +got):\n%s", diff)
			}
		})
	}
}
