package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The registry's URL comes from the environment, checked; answers are
// kept under the user cache directory when there is one.
func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := FromEnv(getenv)
	if err != nil || c.BaseURL != "" || c.Cache != nil {
		t.Errorf("no environment: %+v, %v", c, err)
	}
	env["HOME"], env[EnvURL] = "/home/u", "https://mirror.example/"
	if c, err = FromEnv(getenv); err != nil || c.BaseURL != "https://mirror.example/" || c.Cache.Dir != filepath.FromSlash("/home/u/.cache/mcpbridge/registry") {
		t.Errorf("HOME and a mirror: %+v, %v", c, err)
	}
	env["XDG_CACHE_HOME"] = "/cache"
	if c, _ = FromEnv(getenv); c.Cache.Dir != filepath.FromSlash("/cache/mcpbridge/registry") {
		t.Errorf("XDG_CACHE_HOME: %s", c.Cache.Dir)
	}
	env[EnvURL] = "registry.example"
	if _, err := FromEnv(getenv); err == nil || !strings.Contains(err.Error(), "want the registry's http(s) base URL") {
		t.Errorf("a URL without a scheme: %v", err)
	}
	// Plain http to another machine: whoever is on the path decides what
	// runs here. It used to be taken without a word.
	env[EnvURL] = "http://registry.example"
	if _, err := FromEnv(getenv); err == nil || !strings.Contains(err.Error(), "use https (http only for a registry on this machine)") {
		t.Errorf("plain http to another machine: %v", err)
	}
	for _, local := range []string{"http://127.0.0.1:8080", "http://localhost:8080/", "http://[::1]:9"} {
		env[EnvURL] = local
		if _, err := FromEnv(getenv); err != nil {
			t.Errorf("%s: %v", local, err)
		}
	}
}

// A path is a file; a registry name is not, unless a .json file of that
// name is there; a .json name that cannot be a registry's (no "/") is a
// file, there or not (its absence is what the user needs to hear).
func TestIsFile(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("here.json", []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]bool{"./server.json": true, "/abs/server.json": true, "here.json": true,
		"io.github.x/server": false, "io.github.x/server.json": false, "gone.json": true} {
		if got := IsFile(ref); got != want {
			t.Errorf("IsFile(%q) = %v, want %v", ref, got, want)
		}
	}
	if _, err := ReadFile("here.json"); err == nil {
		t.Error("an empty server.json was read")
	}
}
