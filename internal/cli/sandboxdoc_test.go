package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// docRecipe is a YAML block of docs/sandbox.md that configures sandboxed
// entries: a config file as a user copies it.
type docRecipe struct {
	servers  []string // the serverNames of its sandboxed entries
	packages []string // what its npx entries run (npx -y PACKAGE ...)
	yaml     string
}

// docRecipes returns the recipes of the Markdown file at path.
func docRecipes(t *testing.T, path string) []docRecipe {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docRecipe
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		var entries []struct {
			Config struct {
				ServerName string         `yaml:"serverName"`
				Command    string         `yaml:"command"`
				Args       []string       `yaml:"args"`
				Sandbox    map[string]any `yaml:"sandbox"`
			} `yaml:"config"`
		}
		if err := yaml.Unmarshal([]byte(m[1]), &entries); err != nil {
			continue // not a list of entries
		}
		r := docRecipe{yaml: m[1]}
		for _, e := range entries {
			if e.Config.Sandbox == nil {
				continue
			}
			r.servers = append(r.servers, e.Config.ServerName)
			if e.Config.Command == "npx" && len(e.Config.Args) > 1 && e.Config.Args[0] == "-y" {
				r.packages = append(r.packages, e.Config.Args[1])
			}
		}
		if len(r.servers) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// recipeNotes is the directory docs/sandbox.md's recipes serve; the test
// puts one of its own in its place.
const recipeNotes = "/srv/notes"

// recipeChecks returns what the test asks of each server a recipe of
// docs/sandbox.md configures: a recipe without one fails the test, so
// that every recipe the doc shows is run.
func recipeChecks() map[string]func(t *testing.T, cfg, notes string) {
	return map[string]func(t *testing.T, cfg, notes string){
		// server-filesystem, by npx from its cache without network: it reads
		// and writes the directory written in write, and nothing else.
		"fs": func(t *testing.T, cfg, notes string) {
			args := func(v map[string]string) string { b, _ := json.Marshal(v); return string(b) }
			r := mcpbridge(t, "", "call", "--config", cfg, "mcp__fs__read_text_file", args(map[string]string{"path": filepath.Join(notes, "hello.txt")}))
			if r.code != ExitOK || !strings.Contains(r.stdout, "hello from the recipe") {
				t.Errorf("read_text_file: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			r = mcpbridge(t, "", "call", "--config", cfg, "mcp__fs__write_file", args(map[string]string{"path": filepath.Join(notes, "new.txt"), "content": "written"}))
			if b, err := os.ReadFile(filepath.Join(notes, "new.txt")); r.code != ExitOK || err != nil || string(b) != "written" {
				t.Errorf("write_file: exit %d, file %q (%v)\nstderr: %s", r.code, b, err, r.stderr)
			}
		},
	}
}

// The recipes of docs/sandbox.md work as written, with real servers run
// confined: npx from npm's cache without network (the cache that
// scripts/install-thirdparty.sh fills, as the doc says to), each server
// serving the directory the recipe names. With npm's cache empty, the npx
// recipe fails with npm's ENOTCACHED, as the doc warns.
func TestSandboxDocRecipes(t *testing.T) {
	mcptest.RequireLandlock(t)
	recipes := docRecipes(t, "../../docs/sandbox.md")
	if len(recipes) == 0 {
		t.Fatal("docs/sandbox.md has no recipe (a yaml block of entries with a sandbox)")
	}
	cache := recipeNPMCache(t)
	warm, err := os.ReadFile(filepath.Join(cache, ".warm"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recipes {
		// npx offline needs the package in npm's cache: the recipe says how
		// to put it there, and the install script did.
		for _, pkg := range r.packages {
			if !strings.Contains(r.yaml, "#   npx -y "+pkg+" ") {
				t.Errorf("recipe %d of docs/sandbox.md does not say how to fill npm's cache for %s (a comment line \"#   npx -y %s --help\")", i+1, pkg, pkg)
			}
			if !strings.Contains(string(warm), pkg) {
				t.Fatalf("scripts/install-thirdparty.sh has not had npx fetch %s: add it to npx_packages and run it", pkg)
			}
		}
		notes := t.TempDir()
		if err := os.WriteFile(filepath.Join(notes, "hello.txt"), []byte("hello from the recipe"), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := writeConfig(t, strings.ReplaceAll(r.yaml, recipeNotes, notes))
		t.Setenv("npm_config_cache", cache)
		for _, server := range r.servers {
			check, ok := recipeChecks()[server]
			if !ok {
				t.Errorf("recipe %d of docs/sandbox.md: no check for server %q (add one to recipeChecks)", i+1, server)
				continue
			}
			t.Run(server, func(t *testing.T) { check(t, cfg, notes) })
		}
		if strings.Contains(r.yaml, "command: npx") {
			t.Setenv("npm_config_cache", t.TempDir())
			if st := mcpbridge(t, "", "status", "--config", cfg); st.code != ExitFailed || !strings.Contains(st.stdout, "ENOTCACHED") {
				t.Errorf("recipe %d of docs/sandbox.md with npm's cache empty: exit %d, want %d and npm's ENOTCACHED, as the doc says\n%s",
					i+1, st.code, ExitFailed, st.stdout)
			}
		}
	}
}

// recipeNPMCache returns the npm cache in which scripts/install-thirdparty.sh
// has had npx fetch the recipes' packages.
func recipeNPMCache(t *testing.T) string {
	t.Helper()
	cache, err := filepath.Abs("../../testdata/thirdparty/npm-cache")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cache, ".warm")); err != nil {
		t.Fatalf("npx has not fetched the packages of docs/sandbox.md's recipes into %s (%v): run scripts/install-thirdparty.sh", cache, err)
	}
	return cache
}
