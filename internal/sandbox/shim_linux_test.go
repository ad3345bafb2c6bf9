package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// fakePyenv lays out a runtime manager in home as pyenv does it: a shim
// that execs libexec/pyenv, which reads the version file and execs the
// program of that version (this test binary, linked in). It returns the
// shim.
func fakePyenv(t *testing.T, home string) string {
	t.Helper()
	root := filepath.Join(home, ".pyenv")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "versions", "3.13.0", "bin")
	for _, dir := range []string{bin, filepath.Join(root, "libexec"), filepath.Join(root, "shims")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(exe, filepath.Join(bin, "probe")); err != nil {
		t.Fatal(err) // t.TempDir and the test binary share /tmp
	}
	files := map[string]string{
		"version": "3.13.0\n",
		"libexec/pyenv": "#!/usr/bin/env bash\nset -e\n[ \"$1\" = exec ] && shift\nprogram=\"$1\"; shift\n" +
			"exec \"$PYENV_ROOT/versions/$(cat \"$PYENV_ROOT/version\")/bin/$program\" \"$@\"\n",
		"shims/probe": "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\nexport PYENV_ROOT=\"" + root + "\"\n" +
			"exec \"" + root + "/libexec/pyenv\" exec \"$program\" \"$@\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "shims", "probe")
}

// A server run through a runtime manager's shim in the home directory
// (pyenv's, here) starts sandboxed with nothing named in read: the
// manager's directory is readable, so the shim's exec of
// ~/.pyenv/libexec/pyenv and the version's interpreter work (both failed
// with Permission denied, and the start with EOF). The rest of home stays
// out of reach. A shim elsewhere in home that execs into the manager
// works alike.
func TestSandboxRuntimeManagerShim(t *testing.T) {
	mcptest.RequireLandlock(t)
	for _, tc := range []struct {
		name string
		shim func(t *testing.T, home, pyenvShim string) string
	}{
		{"the manager's own shim", func(_ *testing.T, _, pyenvShim string) string { return pyenvShim }},
		{"a shim in ~/bin", func(t *testing.T, home, pyenvShim string) string {
			text, err := os.ReadFile(pyenvShim)
			if err != nil {
				t.Fatal(err)
			}
			shim := filepath.Join(home, "bin", "probe")
			if err := os.MkdirAll(filepath.Dir(shim), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(shim, text, 0o700); err != nil {
				t.Fatal(err)
			}
			return shim
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			secret := filepath.Join(home, "secret.txt")
			if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
				t.Fatal(err)
			}
			shim := tc.shim(t, home, fakePyenv(t, home))
			cs, _ := startProbeAs(t, shim, map[string]string{"HOME": home}, &sandbox.Spec{})
			if got := probe(t, cs, "read", map[string]any{"path": filepath.Join(home, ".pyenv", "version")}); got != "ok 3.13.0\n" {
				t.Errorf("reading the manager's version file: %q", got)
			}
			if got := probe(t, cs, "read", map[string]any{"path": secret}); !strings.HasPrefix(got, "error") {
				t.Errorf("reading another file of home: %q, want an error", got)
			}
		})
	}
}
