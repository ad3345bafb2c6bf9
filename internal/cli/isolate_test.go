package cli

import (
	"strings"
	"testing"
)

// brokenEntry is an mcp-client entry whose env needs a variable nobody
// set, as the README's github example does on a machine without the token.
const brokenEntry = `- id: github
  name: mcp-client
  config:
    serverName: github
    transport: stdio
    command: npx
    env:
      GITHUB_TOKEN: ${MCPBRIDGE_TEST_UNSET_TOKEN}
`

// brokenAt is where the problem of brokenEntry is, after demoEntry.
const brokenAt = `mcpbridge.yaml:15:21: entry "github": config.env.GITHUB_TOKEN: environment variable "MCPBRIDGE_TEST_UNSET_TOKEN" is not set`

const demoEntry = `- id: demo
  name: mcp-client
  config:
    serverName: demo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
`

// One entry whose config is invalid fails alone: tools, call and status
// use the others, say where the problem is, and exit 1 (as for a server
// that failed to connect); validate still refuses the file.
func TestInvalidEntryFailsAlone(t *testing.T) {
	inDir(t, demoEntry+brokenEntry)

	r := mcpbridge(t, "", "tools")
	if r.code != ExitFailed || !strings.Contains(r.stdout, "mcp__demo__add") {
		t.Errorf("tools: exit %d, want 1 with the demo tools\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, `mcpbridge: server "github" failed: `+brokenAt) || !strings.Contains(r.stderr, "3 tools from 1 of 2 servers") {
		t.Errorf("tools: stderr:\n%s", r.stderr)
	}

	r = mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 2, "b": 3}`)
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "5" {
		t.Errorf("call: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "call", "mcp__github__search", `{}`)
	if r.code != ExitFailed || !strings.Contains(r.stderr, brokenAt) {
		t.Errorf("call of the broken server: exit %d\nstderr: %s", r.code, r.stderr)
	}

	r = mcpbridge(t, "", "status")
	if r.code != ExitFailed || !strings.Contains(r.stdout, "github: failed: "+brokenAt) {
		t.Errorf("status: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "status", "--json")
	if r.code != ExitFailed || !strings.Contains(r.stdout, `"state": "failed"`) || !strings.Contains(r.stdout, `"error": "`+strings.ReplaceAll(brokenAt, `"`, `\"`)) {
		t.Errorf("status --json: exit %d\nstdout: %s", r.code, r.stdout)
	}

	r = mcpbridge(t, "", "validate")
	if r.code != ExitUsage || !strings.Contains(r.stderr, brokenAt) {
		t.Errorf("validate: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// A file that is not a config at all still stops everything.
func TestBrokenFileIsWholeFileError(t *testing.T) {
	inDir(t, demoEntry+"- id: [x\n")
	r := mcpbridge(t, "", "tools")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "invalid YAML") {
		t.Errorf("tools: exit %d\nstderr: %s", r.code, r.stderr)
	}
}

// serve --stdio serves the valid entries of a config with a broken one.
func TestServeWithInvalidEntry(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a")+brokenEntry)
	cs, _, stderr := serveStdioClient(t, cfg)
	waitTools(t, cs, "mcp__a__greet")
	if got, isErr := callText(t, cs, "mcp__a__greet", `{"name":"a"}`); got != "Hello, a!" || isErr {
		t.Errorf("a: %q %v", got, isErr)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), `msg="failed to start" entry=github`) || !strings.Contains(stderr.String(), `config.env.GITHUB_TOKEN`) {
		t.Errorf("the broken entry was not reported:\n%s", stderr.String())
	}
}

// A misspelt field of an mcpServers JSON config is one message, at the
// field, with the name meant; the entry fails alone.
func TestJSONConfigMisspeltField(t *testing.T) {
	cfg := writeFile(t, "mcp.json", `{"mcpServers": {
  "a": {"comand": "x"},
  "b": {"url": "https://example.com/mcp", "headres": {"A": "b"}},
  "c": {"command": "y", "alwaysAllow": []}
}}`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	want := "mcpbridge: " + cfg + ":4:25: mcpServers.c.alwaysAllow: not used by mcpbridge (left out)\n" +
		"mcpbridge: invalid config:\n" +
		cfg + `:2:9: entry "a": mcpServers.a.comand: unknown field: did you mean "command"?` + "\n" +
		cfg + `:3:43: entry "b": mcpServers.b.headres: unknown field: did you mean "headers"?` + "\n"
	if r.code != ExitUsage || r.stderr != want {
		t.Errorf("validate: exit %d\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
}
