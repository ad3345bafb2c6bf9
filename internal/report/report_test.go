package report_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/tool"
)

func plan(t *testing.T, config string) *host.Plan {
	t.Helper()
	lookup := func(k string) (string, bool) { return map[string]string{"SECRET": "hunter2"}[k], k == "SECRET" }
	p, err := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{})).ParseIsolated("f.yaml", []byte(config), lookup)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// get shows what is written and the names of headers and env, never a
// value, expanded or not; list says which entry is invalid and why.
func TestDetail(t *testing.T) {
	p := plan(t, `- id: cmd
  name: mcp-client
  config: {serverName: tool, transport: stdio, command: run-it, args: [--key, "${SECRET}"], env: {TOKEN: "${SECRET}", B: plain}, roots: [/srv]}
- id: bad
  name: mcp-client
  config: {serverName: bad, transport: stdio}
`)
	d := report.Detail(p.Entries[0])
	want := report.EntryDetail{Entry: report.Entry{ID: "cmd", Plugin: "mcp-client", ServerName: "tool", Transport: "stdio", State: "enabled", Origin: "f.yaml:1"},
		Command: "run-it", Args: []string{"--key", "${SECRET}"}, Headers: []string{}, Env: []string{"TOKEN", "B"}, Roots: []any{"/srv"}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Detail (-want +got):\n%s", diff)
	}
	bad := report.Describe(p.Entries[1])
	if bad.State != "invalid" || bad.ServerName != "bad" || bad.Transport != "stdio" || !strings.Contains(bad.Error, "command") {
		t.Errorf("Describe of an invalid entry: %+v", bad)
	}
}

// Tokens are counted per tool and summed per server, servers in the
// order they first appear.
func TestCountTokens(t *testing.T) {
	tools := []tool.Tool{
		{Name: "mcp__b__x", Description: "one", Origin: tool.Origin{Server: "b"}},
		{Name: "mcp__a__y", Description: "two words", Origin: tool.Origin{Server: "a"}},
		{Name: "mcp__b__z", Description: "three more words", Origin: tool.Origin{Server: "b"}},
	}
	c, err := report.CountTokens(tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 2 || c.Servers[0].Server != "b" || c.Servers[0].Tools != 2 || c.Servers[0].Tokens != c.Tools[0].Tokens+c.Tools[2].Tokens {
		t.Errorf("servers %+v of tools %+v", c.Servers, c.Tools)
	}
	totals, _ := report.ServerTotals(tools)
	if totals["a"] != c.Tools[1].Tokens || c.Total != totals["a"]+totals["b"] {
		t.Errorf("totals %v, total %d", totals, c.Total)
	}
}

// status --json reports each server with where it is written, and a
// state without the peer while the server has not introduced itself.
func TestNewStatus(t *testing.T) {
	p := plan(t, "- {id: a, name: mcp-client, config: {serverName: a, command: x}}\n")
	st := []host.Status{{ID: "a", Name: "a", Plugin: "mcp-client", State: host.StateFailed, Err: "boom", Transport: "stdio"}}
	got := report.NewStatus("f.yaml", 0, st, tool.NewRegistry(), p, map[string]int{"a": 7}, []string{"a"})
	if len(got.Servers) != 1 || got.Servers[0].Origin != "f.yaml:1" || got.Servers[0].Tokens != 7 || got.Servers[0].Server != nil || got.Servers[0].Error != "boom" {
		t.Errorf("NewStatus = %+v", got)
	}
}

// resources --json keeps each object as the server sent it, "server"
// first; an empty object and a missing wire still make one object.
func TestNewResources(t *testing.T) {
	res := []tool.Resource{
		{Server: "a", URI: "x://1", Wire: []byte(` {"uri": "x://1", "_meta": {"k": 1}} `)},
		{Server: "b", URI: "x://2", Wire: []byte(`{}`)},
		{Server: "c", URI: "x://3", Name: "three"},
	}
	got := report.NewResources(res, nil)
	want := []string{`{"server":"a","uri": "x://1", "_meta": {"k": 1}}`, `{"server":"b"}`}
	for i, w := range want {
		if string(got.Resources[i]) != w {
			t.Errorf("resource %d: %s, want %s", i, got.Resources[i], w)
		}
	}
	if s := string(got.Resources[2]); !strings.HasPrefix(s, `{"server":"c",`) || !strings.Contains(s, `"three"`) {
		t.Errorf("resource without its wire: %s", s)
	}
	if got.Templates == nil {
		t.Error("templates are null, want []")
	}
}

// get's detail of an entry of another kind than mcp-client has no
// serverName: its display name, the kind's, is no server's name.
func TestDetailOfAnotherKind(t *testing.T) {
	p := plan(t, "- {id: perms, name: permissions, config: {allow: [a]}}\n")
	if d := report.Detail(p.Entries[0]); d.ServerName != "" || d.Plugin != "permissions" {
		t.Errorf("Detail = %+v", d)
	}
}
