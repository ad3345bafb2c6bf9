package cliententry_test

import (
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/cliententry"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
)

func render(t *testing.T, n *yaml.Node) string {
	t.Helper()
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNew(t *testing.T) {
	cases := []struct {
		name      string
		args      cliententry.Args
		transport string
		has       []string
	}{
		{"command", cliententry.Args{Name: "fs", Rest: []string{"npx", "-y", "srv"}, Env: []string{"A=1"}}, "stdio",
			[]string{"command: npx", "args: [-y, srv]", "A: \"1\""}},
		{"URL after the name", cliententry.Args{Name: "r", Rest: []string{"https://x/mcp"}, Headers: []string{"Authorization: Bearer ${T}"}}, "streamable-http",
			[]string{"url: https://x/mcp", "Authorization: Bearer ${T}"}},
		{"sse", cliententry.Args{Name: "r", URL: "http://x/sse", Transport: "sse"}, "sse", []string{"url: http://x/sse"}},
		{"a command's name with a dot", cliententry.Args{Name: "p", Rest: []string{"server.py"}}, "stdio", []string{"command: server.py"}},
		{"an address after --", cliententry.Args{Name: "p", Rest: []string{"localhost:3001/mcp"}, Dashed: true}, "stdio", []string{"command: localhost:3001/mcp"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := cliententry.New(c.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := cliententry.Transport(n); got != c.transport {
				t.Errorf("transport %q, want %q", got, c.transport)
			}
			out := render(t, n)
			for _, want := range append(c.has, "id: "+c.args.Name, "name: "+clientkind.Name) {
				if !strings.Contains(out, want) {
					t.Errorf("entry lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	cases := []struct {
		args cliententry.Args
		want string
	}{
		{cliententry.Args{Name: "x", Rest: []string{"cmd"}, URL: "http://x"}, "not both"},
		{cliententry.Args{Name: "x", URL: "http://x", Transport: "stdio"}, "--transport stdio runs a command"},
		{cliententry.Args{Name: "x", Rest: []string{"cmd"}, Transport: "http"}, "needs the server's URL"},
		{cliententry.Args{Name: "x", Rest: []string{"cmd"}, Transport: "grpc"}, "want stdio, http or sse"},
		{cliententry.Args{Name: "x"}, "want a command after --"},
		{cliententry.Args{Name: "x", URL: "http://x", Env: []string{"A=1"}}, "takes -H/--header"},
		{cliententry.Args{Name: "x", URL: "http://x", Headers: []string{"no colon"}}, "want 'Name: value'"},
		{cliententry.Args{Name: "x", Rest: []string{"cmd"}, Headers: []string{"A: b"}}, "goes with a remote server's URL"},
		{cliententry.Args{Name: "x", Rest: []string{"cmd"}, Env: []string{"novalue"}}, "want NAME=value"},
		{cliententry.Args{Rest: []string{"cmd"}}, "the server's name is empty"},
		{cliententry.Args{Name: "x", Rest: []string{"localhost:3001/mcp"}}, "(mcpbridge add x http://localhost:3001/mcp)"},
		{cliententry.Args{Name: "x", Rest: []string{"[::1]/mcp"}}, "(mcpbridge add x http://[::1]/mcp)"},
		{cliententry.Args{Name: "x", Rest: []string{"mcp.example.com:443/mcp"}}, "(mcpbridge add x https://mcp.example.com:443/mcp)"},
		{cliententry.Args{Name: "x", Rest: []string{"ftp://x/mcp"}}, "one starts with http:// or https:// (mcpbridge add x https://x/mcp)"},
		{cliententry.Args{Name: "x", URL: "localhost:3001/mcp", Cmd: func(bool) string { return "mcpbridge add --config c.yaml" }}, "(mcpbridge add --config c.yaml x --url http://localhost:3001/mcp)"},
	}
	for _, c := range cases {
		if _, err := cliententry.New(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error saying %q", c.args, err, c.want)
		}
	}
}

// Only a value written as it is, named like a secret, is one: an env
// variable by the names the child's environment is scrubbed of, a header
// by those too or as HTTP's credential headers; a header's variable is
// its name made one.
func TestLiteralSecrets(t *testing.T) {
	stdio, err := cliententry.New(cliententry.Args{Name: "db", Rest: []string{"db-mcp"},
		Env: []string{"API_KEY=sk-1", "DEBUG=1", "GITHUB_TOKEN=${GH_TOKEN}", "DB_PASSWORD=", "db-secret=x"}})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := cliententry.New(cliententry.Args{Name: "web", URL: "https://x/mcp",
		Headers: []string{"authorization: Bearer abc", "X-Trace: 1", "X-Api-Key: k", "Cookie: s=1", "Proxy-Authorization: Bearer ${P}"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		entry *yaml.Node
		want  []cliententry.Secret
	}{
		{stdio, []cliententry.Secret{{"API_KEY", "API_KEY"}, {"db-secret", "DB_SECRET"}}},
		{remote, []cliententry.Secret{{"authorization", "AUTHORIZATION"}, {"X-Api-Key", "X_API_KEY"}, {"Cookie", "COOKIE"}}},
	} {
		got := cliententry.LiteralSecrets(c.entry)
		if !slices.Equal(got, c.want) {
			t.Errorf("LiteralSecrets = %v, want %v in\n%s", got, c.want, render(t, c.entry))
		}
	}
}

// NotServer lets a server's entry through and refuses another kind's,
// naming its kind and place.
func TestNotServer(t *testing.T) {
	var list yaml.Node
	if err := yaml.Unmarshal([]byte("- {id: s, name: mcp-client}\n- {id: p, name: permissions}\n- {id: n}\n"), &list); err != nil {
		t.Fatal(err)
	}
	items := list.Content[0].Content
	if err := cliententry.NotServer("remove", "s", "f.yaml", items[0]); err != nil {
		t.Errorf("a server refused: %v", err)
	}
	for i, want := range map[int]string{1: `remove: "x" is the permissions entry at f.yaml:2, not a server`, 2: `is an entry without a kind at f.yaml:3`} {
		if err := cliententry.NotServer("remove", "x", "f.yaml", items[i]); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "delete its lines from f.yaml") {
			t.Errorf("entry %d: %v, want %q", i, err, want)
		}
	}
}
