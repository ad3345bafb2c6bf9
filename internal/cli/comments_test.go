package cli

import (
	"os"
	"testing"
)

// add then remove gives every file back byte for byte: a header-only file,
// trailing comments after the last entry (at the list's level, and blank
// lines before them), an indented comment inside the last entry, and a
// file without a final newline.
func TestAddRemoveRoundTripKeepsComments(t *testing.T) {
	userScope(t)
	const entry = "- {id: a, name: mcp-client, config: {serverName: a, transport: stdio, command: a}}\n"
	for _, before := range []string{
		"# my servers\n",
		"# my servers\n# second line\n\n",
		entry + "# trailing comment\n",
		"# head\n" + entry + "\n# commented out:\n# - id: old\n\n",
		"- id: a\n  name: mcp-client\n  config:\n    serverName: a\n    transport: stdio\n    command: a\n    # args: [--debug]\n",
		entry + "# no final newline",
		"  " + entry + "  # indented list, trailing\n",
	} {
		cfg := writeConfig(t, before)
		if r := mcpbridge(t, "", "add", "--config", cfg, "x", "--", "cmd"); r.code != ExitOK {
			t.Fatalf("add to %q: %+v", before, r)
		}
		added, _ := os.ReadFile(cfg)
		if r := mcpbridge(t, "", "validate", "--config", cfg); r.code != ExitOK {
			t.Errorf("after add to %q: invalid:\n%s\n%s", before, added, r.stderr)
		}
		if r := mcpbridge(t, "", "remove", "--config", cfg, "x"); r.code != ExitOK {
			t.Fatalf("remove from %q: %+v", added, r)
		}
		if after, _ := os.ReadFile(cfg); string(after) != before && string(after) != before+"\n" {
			t.Errorf("round trip of %q:\nafter add:\n%s\nafter remove: %q", before, added, after)
		}
	}
}
