package permissions_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/agent"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
)

// A permissions entry's config: the patterns as written; a mistake is
// named at its position, with what to write instead.
func TestDecode(t *testing.T) {
	for _, c := range []struct {
		config string
		want   agent.Permissions
		err    string
	}{
		{"", agent.Permissions{}, ""},
		{"{allow: [mcp__demo__add, 'mcp__fs__*'], deny: [mcp__fs__delete]}", agent.Permissions{Allow: []string{"mcp__demo__add", "mcp__fs__*"}, Deny: []string{"mcp__fs__delete"}}, ""},
		{"{allow: [mcp__demo__add, 'mcp__*__x']}", agent.Permissions{}, `1:26: config.allow[1]: "mcp__*__x" may hold * only at its end`},
		{"{deny: ['']}", agent.Permissions{}, `config.deny[0]: "" is empty`},
		{"{allowed: [x]}", agent.Permissions{}, `config.allowed: unknown key`},
		{"{allow: mcp__demo__add}", agent.Permissions{}, `config.allow`},
	} {
		var n *yaml.Node
		if c.config != "" {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(c.config), &doc); err != nil {
				t.Fatal(err)
			}
			n = doc.Content[0]
		}
		got, err := permkind.Decode(n, nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.config, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.config, err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.config, d)
		}
	}
}
