package registry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/confedit"
)

// The name an entry takes from a registry name is a serverName mcpbridge
// accepts, or nothing.
func TestServerName(t *testing.T) {
	for in, want := range map[string]string{
		"io.github.someone/brave-search":    "brave-search",
		"io.github.someone/a.b c":           "a-b-c",
		"io.github.someone/x__y___z":        "x_y_z",
		"io.github.someone/_edge-":          "edge",
		"io.github.someone/" + long():       long()[:32],
		"io.github.someone/..":              "",
		"no-namespace":                      "",
		"io.github.someone/ünïcode-server_": "n-code-server",
	} {
		if got := ServerName(in); got != want {
			t.Errorf("ServerName(%q) = %q, want %q", in, got, want)
		}
	}
}

func long() string { return "abcdefghijklmnopqrstuvwxyz0123456789" }

func TestSplitRef(t *testing.T) {
	for in, want := range map[string][2]string{
		"io.x/y":         {"io.x/y", ""},
		"io.x/y@1.2.0":   {"io.x/y", "1.2.0"},
		"io.x/y@latest":  {"io.x/y", "latest"},
		"@scope/pkg@1.0": {"@scope/pkg", "1.0"},
		"@scope/pkg":     {"@scope/pkg", ""},
	} {
		if n, v := SplitRef(in); n != want[0] || v != want[1] {
			t.Errorf("SplitRef(%q) = %q, %q, want %q", in, n, v, want)
		}
	}
}

// An entry with every part, written as a config file holds it.
func TestNode(t *testing.T) {
	e := Entry{Transport: "streamable-http", URL: "https://x.example/mcp",
		Env: []Pair{{"A", "${A}"}}, Headers: []Pair{{"Authorization", "Bearer ${TOKEN}"}},
		Name: "io.x/y", Version: "1.0.0"}
	out, err := confedit.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{e.Node("y")}})
	if err != nil {
		t.Fatal(err)
	}
	want := `- id: y
  name: mcp-client
  config:
    serverName: y
    transport: streamable-http
    url: https://x.example/mcp
    env:
      A: ${A}
    headers:
      Authorization: Bearer ${TOKEN}
    registry: {name: io.x/y, version: 1.0.0}
`
	if d := cmp.Diff(want, string(out)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
