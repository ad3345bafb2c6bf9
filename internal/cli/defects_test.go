package cli

import (
	"strings"
	"testing"
)

// A mistyped prompt name gets the name meant; a server's JSON-RPC error
// reads "MCP error -32602:" once.
func TestPromptErrors(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "prompt", "--config", cfg, "mcp__everything__simple-promt")
	if r.code != ExitFailed || !strings.Contains(r.stderr, `unknown prompt "mcp__everything__simple-promt": did you mean mcp__everything__simple-prompt?`) {
		t.Errorf("a typo: %+v", r)
	}
	r = mcpbridge(t, "", "prompt", "--config", cfg, "simple-prompt")
	if !strings.Contains(r.stderr, "did you mean mcp__everything__simple-prompt?") {
		t.Errorf("a raw name: %+v", r)
	}
	r = mcpbridge(t, "", "prompt", "--config", cfg, "mcp__everything__args-prompt", "{}")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "prompts/get: MCP error -32602: Invalid arguments") || strings.Count(r.stderr, "MCP error") != 1 {
		t.Errorf("invalid arguments: %+v", r)
	}
}

// read --server says whether the server is missing (with the name meant)
// or offers no resources.
func TestReadServerFlag(t *testing.T) {
	inDir(t, demoEntry)
	r := mcpbridge(t, "", "read", "--server", "demo", "demo://x")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "--server demo: the server offers no resources") {
		t.Errorf("a server without resources: %+v", r)
	}
	r = mcpbridge(t, "", "read", "--server", "dmeo", "demo://x")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `--server dmeo: no such server in the config: did you mean "demo"?`) {
		t.Errorf("a typo: %+v", r)
	}
}

// ~/.claude.json's per-project servers are named on stderr, not ignored
// silently; its top-level servers are read.
func TestClaudeJSONProjectServers(t *testing.T) {
	cfg := writeFile(t, "claude.json", `{
  "numStartups": 3,
  "mcpServers": {"demo": {"command": "${MCPBRIDGE_EXE}", "args": ["demo-server"]}},
  "projects": {
    "/home/u/app": {"mcpServers": {"db": {"command": "db-mcp"}, "web": {"url": "https://example.com/mcp"}}},
    "/home/u/other": {"mcpServers": {}}
  }
}`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	want := cfg + `:5:35: projects["/home/u/app"].mcpServers: 2 servers of this project (Claude Code's local scope) not read`
	if r.code != ExitOK || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "other") || !strings.Contains(r.stdout, "OK, 1 entry") {
		t.Errorf("validate: %+v\nwant stderr %q", r, want)
	}
}

// login and logout suggest the server meant.
func TestLoginSuggestsServer(t *testing.T) {
	inDir(t, demoEntry)
	for _, cmd := range []string{"login", "logout"} {
		r := mcpbridge(t, "", cmd, "dmeo")
		if r.code != ExitUsage || !strings.Contains(r.stderr, `no enabled server named "dmeo" in mcpbridge.yaml: did you mean "demo"?`) {
			t.Errorf("%s: %+v", cmd, r)
		}
	}
}
