package configsource_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

func write(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func reader(notes *strings.Builder) configsource.Reader {
	return configsource.Reader{Catalog: host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{})), Lookup: os.LookupEnv, Notes: notes}
}

// A file named wins over $MCPBRIDGE_CONFIG, which wins over the scopes.
func TestFiles(t *testing.T) {
	env := map[string]string{configsource.EnvConfig: "/env.yaml"}
	getenv := func(k string) string { return env[k] }
	if got := configsource.Files("/named.yaml", getenv); !cmp.Equal(got, []scopes.File{{Path: "/named.yaml"}}) {
		t.Errorf("named: %v", got)
	}
	if got := configsource.Files("", getenv); !cmp.Equal(got, []scopes.File{{Path: "/env.yaml", Env: configsource.EnvConfig}}) {
		t.Errorf("from the environment: %v", got)
	}
}

// Another client's config is converted: its problems point at its own
// lines, a misspelt field is its entry's problem alone, and what could
// not be mapped is noted.
func TestParseForeign(t *testing.T) {
	path := write(t, ".mcp.json", `{
  "mcpServers": {
    "good": {"command": "echo", "args": ["hi"]},
    "typo": {"comand": "echo"},
    "remote": {"type": "http", "url": "https://example.com/mcp", "oauth": {"x": 1}}
  }
}`)
	var notes strings.Builder
	plan, err := reader(&notes).Parse(path, mustRead(t, path))
	if err != nil {
		t.Fatal(err)
	}
	var invalid []string
	for _, pe := range plan.Invalid() {
		invalid = append(invalid, pe.Entry.ID)
	}
	if !cmp.Equal(invalid, []string{"typo"}) {
		t.Errorf("invalid entries %v, want [typo]", invalid)
	}
	var ces confpos.Errors
	if err := configsource.InvalidErrors(plan); !errors.As(err, &ces) || ces[0].Line != 4 || !strings.Contains(err.Error(), "comand") {
		t.Errorf("InvalidErrors = %v, want the misspelt field at line 4", err)
	}
	for _, pe := range plan.Entries {
		if pe.Entry.ID == "good" && pe.Entry.Line != 3 {
			t.Errorf("entry good at line %d, want its line in the JSON, 3", pe.Entry.Line)
		}
	}
	if !strings.Contains(notes.String(), path) {
		t.Errorf("no note names the file:\n%s", notes.String())
	}
}

// Merged puts a later file's entry in place of an earlier one's of its
// id; a missing file is an error, except at a reload, where it keeps the
// plan it had.
func TestMerged(t *testing.T) {
	user := write(t, "user.yaml", "- id: a\n  name: mcp-client\n  config: {serverName: a, command: echo}\n- id: b\n  name: mcp-client\n  config: {serverName: b, command: echo}\n")
	project := write(t, "project.yaml", "- id: b\n  name: mcp-client\n  config: {serverName: b2, command: echo}\n")
	files := []scopes.File{{Path: user, Scope: scopes.User}, {Path: project, Scope: scopes.Project}}
	plan, err := reader(nil).Merged(files)
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, pe := range plan.Enabled() {
		servers = append(servers, pe.Spec.Name)
	}
	if !cmp.Equal(servers, []string{"a", "b2"}) {
		t.Errorf("servers %v, want [a b2]", servers)
	}
	plans, err := reader(nil).Plans(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := configsource.ServersByFile(plans); !cmp.Equal(got, map[string][]string{user: {"a", "b"}, project: {"b2"}}) {
		t.Errorf("ServersByFile = %v", got)
	}
	gone := append(files, scopes.File{Path: filepath.Join(t.TempDir(), "gone.yaml")})
	if _, err := reader(nil).Merged(gone); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing file: %v", err)
	}
	// At a reload, the user file gone keeps the plan it had, and the
	// project file is read as it is now.
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project, []byte("- id: c\n  name: mcp-client\n  config: {serverName: c, command: echo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	again, err := reader(nil).Plans(files, plans)
	if err != nil {
		t.Fatal(err)
	}
	if got := configsource.ServersByFile(again); !cmp.Equal(got, map[string][]string{user: {"a", "b"}, project: {"c"}}) {
		t.Errorf("ServersByFile after the user file is gone = %v", got)
	}
	if _, err := reader(nil).Plans(gone, plans); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing file with no plan of its own: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
