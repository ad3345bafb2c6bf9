package permissions_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
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

// "Always" edits the user config as a person would: the pattern joins
// the first enabled permissions entry's allow list (block or flow, once),
// in place, the comments in and around it kept and every other line as
// it was; without one an entry is appended.
func TestAllow(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"new file", "", "- id: permissions\n  name: permissions\n  config:\n    allow: [mcp__a__x]\n"},
		{"block list, entry in the middle", "# top\n- id: a # server a\n  name: mcp-client\n\n# my rules\n- id: perms\n  name: permissions\n  config:\n    allow:\n      - mcp__b__y # old\n    deny: [mcp__c__*]\n\n# last\n- id: z\n  name: tool-search\n",
			"# top\n- id: a # server a\n  name: mcp-client\n\n# my rules\n- id: perms\n  name: permissions\n  config:\n    allow:\n      - mcp__b__y # old\n      - mcp__a__x\n    deny: [mcp__c__*]\n\n# last\n- id: z\n  name: tool-search\n"},
		{"flow entry, no config", "- {id: p, name: permissions}\n", "- {id: p, name: permissions, config: {allow: [mcp__a__x]}}\n"},
		{"already there", "- id: p\n  name: permissions\n  config: {allow: [mcp__a__x]}\n", "- id: p\n  name: permissions\n  config: {allow: [mcp__a__x]}\n"},
		{"disabled one skipped", "- {id: p, name: permissions, disabled: true}\n",
			"- {id: p, name: permissions, disabled: true}\n- id: permissions\n  name: permissions\n  config:\n    allow: [mcp__a__x]\n"},
		// YAML's other spellings of true disable it as well (it used to
		// take the answer, never read)
		{"disabled: True skipped", "- {id: p, name: permissions, disabled: True}\n",
			"- {id: p, name: permissions, disabled: True}\n- id: permissions\n  name: permissions\n  config:\n    allow: [mcp__a__x]\n"},
	} {
		doc, list, err := confedit.Parse("config.yaml", []byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := permkind.Allow([]byte(c.in), doc, list, "mcp__a__x")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, string(out)); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
}
