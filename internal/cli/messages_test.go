package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// Mistakes a new user makes get a message that says what to do instead,
// quoted here as the user sees it.
func TestMessagesSayHowToFix(t *testing.T) {
	userScope(t)
	t.Chdir(t.TempDir())
	tabbed := filepath.Join(t.TempDir(), "tab.yaml")
	writeFileAt(t, tabbed, "- id: a\n  name: mcp-client\n  config:\n\tserverName: a\n")
	tokenInFile := filepath.Join(t.TempDir(), "gw.yaml")
	writeFileAt(t, tokenInFile, "- {id: gw, name: gateway, config: {auth: {tokens: {ci: ci-token-abc}}}}\n")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"KEY=VALUE for JSON", []string{"call", "mcp__demo__add", "a=1"},
			`call: arguments "a=1" are KEY=VALUE, not JSON: write --arg a=1 (one --arg per argument), or the JSON object '{"a": ...}'`},
		{"name and arguments swapped", []string{"call", `{"a":1}`, "mcp__demo__add"},
			`call: the tool's name comes first, then its arguments: mcpbridge call mcp__demo__add '{"a":1}'`},
		{"broken JSON", []string{"call", "mcp__demo__add", `{"a":`},
			`call: arguments are not valid JSON: unexpected end of JSON input (want an object such as '{"a": 1}', or --arg K=V per argument)`},
		{"remove with no config file", []string{"remove", "nothere"},
			`remove: there is no config file to remove "nothere" from (looked for mcpbridge.yaml and `},
		{"add-json without command or url", []string{"add-json", "--config", filepath.Join(t.TempDir(), "c.yaml"), "bad", `{"type":"stdio"}`},
			`add-json: server "bad" not added: it has neither "command" (a stdio server) nor "url" (an HTTP server), like '{"type": "stdio", "command": "npx", "args": ["-y", "PACKAGE"]}'`},
		{"a token where its variable's name belongs", []string{"serve", "--http", "--token-env", "ci-token-abc"},
			"serve: --token-env takes the name of the variable that holds the token, not the token: export MCPBRIDGE_TOKEN=… and pass --token-env MCPBRIDGE_TOKEN"},
		{"a token in the gateway entry", []string{"validate", "--config", tokenInFile},
			`config.auth.tokens: token "ci": the value is not a variable name (not shown: it may be the token itself)`},
		{"a tab in YAML", []string{"validate", "--config", tabbed},
			`tab.yaml:4:1: invalid YAML: found character that cannot start any token (this line is indented with a tab: YAML indents with spaces only)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mcpbridge(t, "", c.args...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "mcpbridge:") != 1 {
				t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 and one message: %q", c.args, r.code, r.stderr, c.want)
			}
			if strings.Contains(r.stderr, "ci-token-abc") {
				t.Errorf("the pasted token was echoed:\n%s", r.stderr)
			}
		})
	}
}

// remove names only the config files that exist: a project file that is
// not there is not where the server was looked for.
func TestRemoveNamesOnlyExistingFiles(t *testing.T) {
	user := userScope(t)
	t.Chdir(t.TempDir())
	writeFileAt(t, user, "- {id: a, name: mcp-client, config: {serverName: a, transport: stdio, command: x}}\n")
	r := mcpbridge(t, "", "remove", "nothere")
	want := `remove: ` + user + ` has no server "nothere"`
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "mcpbridge.yaml") {
		t.Errorf("exit %d, stderr %q; want 2 and %q, and no mention of the missing project file", r.code, r.stderr, want)
	}
}
