package configsource_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

func servers(p *host.Plan) []string {
	var out []string
	for _, pe := range p.Entries {
		out = append(out, pe.Entry.ID)
	}
	return out
}

// A call keeps its own server; pin keeps the servers named, and names
// the one missing.
func TestOnlyAndServers(t *testing.T) {
	p, err := reader(nil).Parse("f.yaml", []byte("- {id: a, name: mcp-client, config: {serverName: a, command: x}}\n"+
		"- {id: b, name: mcp-client, config: {serverName: b, command: x}}\n- {id: c, name: mcp-client, disabled: true, config: {serverName: c, command: x}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := configsource.Only(p, "b"); !ok || !cmp.Equal(servers(got), []string{"b"}) {
		t.Errorf("Only b: %v, %v", servers(got), ok)
	}
	if got, ok := configsource.Only(p, "c"); ok || got != p {
		t.Errorf("Only of a disabled server narrowed the plan: %v", servers(got))
	}
	if got, missing := configsource.Servers(p, []string{"a"}); missing != "" || !cmp.Equal(servers(got), []string{"a"}) {
		t.Errorf("Servers a: %v, %q", servers(got), missing)
	}
	if _, missing := configsource.Servers(p, []string{"a", "c"}); missing != "c" {
		t.Errorf("Servers a c: missing %q, want c", missing)
	}
}

// --url is one server of its own name, "remote" by default; a URL that
// is not one is refused.
func TestURL(t *testing.T) {
	p, err := configsource.URL("", "https://example.com/mcp", nil)
	if err != nil || len(p.Entries) != 1 || p.Entries[0].Spec.Name != "remote" || p.Source != "--url" {
		t.Fatalf("URL: %+v, %v", p, err)
	}
	if _, err := configsource.URL("x", "ftp://example.com", nil); err == nil {
		t.Error("an ftp URL was taken")
	}
	dir := t.TempDir()
	ls := pin.NewSet()
	configsource.PlaceURLLock(ls, dir, "https://example.com/mcp", p)
	if paths := ls.Paths(); len(paths) != 1 || !strings.HasPrefix(paths[0], filepath.Join(dir, "locks")+string(filepath.Separator)) {
		t.Errorf("the --url lock is at %v", paths)
	}
}

// Each server is pinned in the lock beside the file that defines it.
func TestPlaceLocks(t *testing.T) {
	user := write(t, "user.yaml", "- {id: a, name: mcp-client, config: {serverName: a, command: echo}}\n")
	project := write(t, "project.yaml", "- {id: b, name: mcp-client, config: {serverName: b, command: echo}}\n")
	files := []scopes.File{{Path: user, Scope: scopes.User}, {Path: project, Scope: scopes.Project}}
	plans, err := reader(nil).Plans(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	ls := pin.NewSet()
	configsource.PlaceLocks(ls, files, configsource.ServersByFile(plans), host.Merge(plans...))
	if got := ls.Paths(); !cmp.Equal(got, []string{pin.Beside(user), pin.Beside(project)}) {
		t.Errorf("locks %v", got)
	}
	if configsource.OnlyPermissions(files, plans) {
		t.Error("two files of servers read as the permissions alone")
	}
}
