package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/completion"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// writeFile writes a file named name in a new directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A Claude Desktop config used as it is: the demo server is listed and
// called, the fields mcpbridge does not use are named with their position.
func TestMCPServersJSONAsConfig(t *testing.T) {
	cfg := writeFile(t, "claude_desktop_config.json", `{
  "mcpServers": {
    "demo": {
      "command": "${MCPBRIDGE_EXE}",
      "args": ["demo-server"],
      "alwaysAllow": ["echo"]
    }
  }
}`)
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__demo__add", `{"a": 2, "b": 3}`)
	if r.code != ExitOK || r.stdout != "5\n" {
		t.Fatalf("call: %+v", r)
	}
	if want := cfg + ":6:7: mcpServers.demo.alwaysAllow: not used by mcpbridge (left out)"; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	toml := writeFile(t, "config.toml", "model = \"o3\"\n\n[mcp_servers.demo]\ncommand = \"${MCPBRIDGE_EXE}\"\nargs = [\"demo-server\"]\n")
	// Codex expands nothing: its ${MCPBRIDGE_EXE} is a literal command name.
	if r := mcpbridge(t, "", "validate", "--config", toml); r.code != ExitOK || !strings.Contains(r.stdout, "OK, 1 entry") {
		t.Errorf("validate of Codex TOML: %+v", r)
	}
}

// The variables of Cursor's and Windsurf's mcp.json, ${env:NAME} and
// ${userHome}, are the environment's and the home directory, as those
// clients expand them: the server starts with them, and a header's is a
// credential withheld from the other children. They were refused as
// unsupported references, failing every server that used one.
func TestCursorVariablesExpanded(t *testing.T) {
	t.Setenv("CURSORTOK", "cursor-x")
	t.Setenv("CURSORPAT", "cursor-y")
	dump, server := envDumpServer(t, map[string]string{"TOKEN": "${env:CURSORTOK}", "HOMEDIR": "${userHome}/.cache"})
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"dump": server,
		"web":  map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer ${env:CURSORPAT}"}},
	}})
	cfg := writeFile(t, "mcp.json", string(data))
	got := childEnvOf(t, dump, "status", "--config", cfg)
	for _, kv := range []string{"TOKEN=cursor-x", "HOMEDIR=" + os.Getenv("HOME") + "/.cache"} {
		if !strings.Contains(got, kv+"\n") {
			t.Errorf("the child lacks %s:\n%s", kv, got)
		}
	}
	withheldFrom(t, got, "CURSORPAT")
	if r := mcpbridge(t, "", "validate", "--config", cfg); r.code != ExitOK {
		t.Errorf("validate: %+v", r)
	}
}

// Windsurf's mcp_config.json names a server's URL serverUrl: a note on it
// names serverUrl, the key the user wrote, at its place. It named url,
// which the file does not have.
func TestWindsurfServerURLNoted(t *testing.T) {
	cfg := writeFile(t, "mcp_config.json", `{"mcpServers": {"remote": {"serverUrl": "http://127.0.0.1:1/sse"}}}`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	want := cfg + `:1:41: mcpServers.remote.serverUrl: no type: the path ends in /sse, so the legacy SSE transport is used`
	if r.code != ExitOK || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d, want 0 and %q:\n%s", r.code, want, r.stderr)
	}
}

// A Codex server with a misspelt key (comand), or with neither command
// nor url, is refused as a JSON one is, at the key, saying what to write;
// it was taken for an HTTP server and refused as "mcp_servers.typo: is
// required with transport: streamable-http", naming no key, the misspelt
// one only noted as left out.
func TestCodexServerWithoutTransport(t *testing.T) {
	cfg := writeFile(t, "config.toml", "[mcp_servers.typo]\ncomand = \"npx\"\nargs = [\"-y\", \"pkg\"]\n\n[mcp_servers.none]\nargs = []\n")
	r := mcpbridge(t, "", "validate", "--config", cfg)
	for _, want := range []string{
		cfg + `:2:1: entry "typo": mcp_servers.typo.comand: unknown field: did you mean "command"?`,
		cfg + `:5:1: entry "none": mcp_servers.none: has neither "command" (a program to start) nor "url" (the address of an HTTP server): add one`,
	} {
		if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("validate: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "is required with transport") || strings.Contains(r.stderr, "left out") {
		t.Errorf("validate speaks of a transport the file does not name, or of a field left out:\n%s", r.stderr)
	}
}

// VS Code's mcp.json holds its servers under "servers" (and a settings.json
// under "mcp"), a format --config does not read: the refusal says so, and
// how to bring the servers over. It said only that there was no
// "mcpServers" object and which clients' files are read.
func TestVSCodeConfigRefusedSayingWhatToDo(t *testing.T) {
	for name, src := range map[string]string{
		"mcp.json":      `{"inputs": [{"type": "promptString", "id": "tok", "password": true}], "servers": {"gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${input:tok}"}}}}`,
		"settings.json": `{"editor.fontSize": 14, "mcp": {"servers": {"demo": {"command": "npx", "args": ["-y", "pkg"]}}}}`,
	} {
		cfg := writeFile(t, name, src)
		r := mcpbridge(t, "", "tools", "--config", cfg)
		want := `servers: VS Code's MCP servers are not read: add each one with mcpbridge add-json NAME '{…}', its object as it is, with ${VAR} for a ${input:ID} in it`
		if r.code != ExitUsage || !strings.Contains(r.stderr, cfg+":1:") || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, want 2 and %q at its place:\n%s", name, r.code, want, r.stderr)
		}
	}
}

// A problem of a converted config that names another line (an id two
// servers end up with, a key given twice) names the source file's line,
// as its position does, and a key given twice its path there. They named
// the line and key of the converted YAML, which the user never sees.
func TestForeignConfigErrorNamesSourceLine(t *testing.T) {
	cfg := writeFile(t, "mcp.json", `{"mcpServers": {
  "demo": {"command": "x",
     "command": "y"},
  "my.server": {"command": "x"},
  "my-server": {"command": "x"}
}}`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	want := cfg + `:5:3: entry "my-server": mcpServers.my-server: duplicate id "my-server": the entry at line 4 already uses it`
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
	cfg = writeFile(t, "mcp.json", "{\"mcpServers\": {\n  \"demo\": {\"command\": \"x\",\n     \"command\": \"y\"}\n}}")
	r = mcpbridge(t, "", "validate", "--config", cfg)
	if want := cfg + `:3:17: entry "demo": mcpServers.demo.command: duplicate key "command" (first defined at line 2)`; r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
}

// A Codex timeout out of range is noted in the file's terms, its seconds
// as written, and left out, as a JSON one is; it was refused in the
// converted config's milliseconds ("must be between 1 and 2147483647,
// got -1000" for tool_timeout_sec = -1), a value the file does not hold.
func TestCodexTimeoutOutOfRange(t *testing.T) {
	cfg := writeFile(t, "config.toml", "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = -1\nstartup_timeout_sec = 3e6\n")
	r := mcpbridge(t, "", "validate", "--config", cfg)
	for _, want := range []string{
		cfg + `:3:1: mcp_servers.a.tool_timeout_sec: must be a positive number of seconds, at most 2147483, got -1 (left out)`,
		cfg + `:4:1: mcp_servers.a.startup_timeout_sec: must be a positive number of seconds, at most 2147483, got 3e+06 (left out)`,
	} {
		if r.code != ExitOK || !strings.Contains(r.stderr, want) {
			t.Errorf("validate: exit %d, want 0 and %q:\n%s", r.code, want, r.stderr)
		}
	}
}

// The tools a server's disabledTools lists (Roo Code's and Kiro's
// mcpServers JSON) are hidden, as excludeTools' are: they were left out
// with a note, and every tool the user had disabled was offered.
func TestDisabledToolsHidden(t *testing.T) {
	cfg := writeFile(t, "mcp_settings.json", `{"mcpServers": {"demo": {"command": "${MCPBRIDGE_EXE}", "args": ["demo-server"], "alwaysAllow": [], "disabledTools": ["echo"]}}}`)
	r := mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != ExitOK || strings.Contains(r.stdout, "mcp__demo__echo") || !strings.Contains(r.stdout, "mcp__demo__add") || strings.Contains(r.stderr, "disabledTools") {
		t.Errorf("tools: %+v", r)
	}
	both := writeFile(t, "both.json", `{"mcpServers": {"demo": {"command": "x", "excludeTools": ["add"], "disabledTools": ["echo"]}}}`)
	r = mcpbridge(t, "", "validate", "--config", both)
	if want := both + `:1:67: mcpServers.demo.disabledTools: not used: excludeTools lists the tools to hide (left out)`; !strings.Contains(r.stderr, want) {
		t.Errorf("validate: %+v\nwant %q", r, want)
	}
}

// Problems of a converted config are reported at the source's line and
// column.
func TestForeignConfigErrorPosition(t *testing.T) {
	cfg := writeFile(t, "mcp.json", "{\"mcpServers\": {\n  \"web\": {\"type\": \"http\",\n    \"url\": \"ftp://example.com\"}}}")
	want := cfg + `:3:12: entry "web": mcpServers.web.url: must be an absolute http`
	r := mcpbridge(t, "", "validate", "--config", cfg)
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: exit %d, want 2 and %q:\n%s", r.code, want, r.stderr)
	}
	r = mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != ExitFailed || !strings.Contains(r.stderr, `server "web" failed: `+want) {
		t.Errorf("tools: exit %d, want 1 and %q:\n%s", r.code, want, r.stderr)
	}
	bad := writeFile(t, "bad.json", "{\"mcpServers\": {\"a\": }}")
	if r := mcpbridge(t, "", "tools", "--config", bad); r.code != ExitUsage || !strings.Contains(r.stderr, bad+":1:22: invalid JSON") {
		t.Errorf("invalid JSON: %+v", r)
	}
}

func TestImport(t *testing.T) {
	golden, err := os.ReadFile("../importconf/testdata/cursor.golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("../importconf/testdata")
	r := mcpbridge(t, "", "import", "cursor.json")
	if r.code != ExitOK || r.stdout != string(golden) {
		t.Errorf("import: exit %d\n%s\nwant\n%s", r.code, r.stdout, golden)
	}
	if !strings.Contains(r.stderr, "cursor.json:6:7: mcpServers.web-search.envFile: not used by mcpbridge") {
		t.Errorf("stderr: %s", r.stderr)
	}
	yaml := writeConfig(t, "[]\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import"}, "import: want FILE"},
		{[]string{"import", "no-such.json"}, "no-such.json does not exist"},
		{[]string{"import", yaml}, "is not an mcpServers JSON or a Codex config.toml"},
		{[]string{"import", writeFile(t, "x.json", "{")}, "invalid JSON"},
	} {
		if r := mcpbridge(t, "", c.args...); r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %+v, want %q", c.args, r, c.want)
		}
	}
}

const commentedConfig = `# my servers
- id: demo # the built-in one
  name: mcp-client
  config:
    serverName: demo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]

# parked for now
- id: parked
  name: mcp-client
  disabled: true
  config: {serverName: parked}
`

// add and remove edit the file in place: comments and order kept, the
// result valid, and usable at once.
func TestAddRemoveRoundTrip(t *testing.T) {
	cfg := writeConfig(t, commentedConfig)
	r := mcpbridge(t, "", "add", "--config", cfg, "second", "--env", "GREETING=hi", "--env", "TOKEN=${SECOND_TOKEN}", "--", "${MCPBRIDGE_EXE}", "demo-server")
	if r.code != ExitOK {
		t.Fatalf("add: %+v", r)
	}
	r = mcpbridge(t, "", "add", "--config", cfg, "web", "--url", "https://example.com/mcp", "--header", "Authorization: Bearer ${WEB_TOKEN}", "--transport", "sse")
	if r.code != ExitOK {
		t.Fatalf("add --url: %+v", r)
	}
	data, _ := os.ReadFile(cfg)
	want := commentedConfig + `- id: second
  name: mcp-client
  config:
    serverName: second
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
    env:
      GREETING: hi
      TOKEN: ${SECOND_TOKEN}
- id: web
  name: mcp-client
  config:
    serverName: web
    transport: sse
    url: https://example.com/mcp
    headers:
      Authorization: Bearer ${WEB_TOKEN}
`
	if string(data) != want {
		t.Fatalf("after add:\n%s\nwant:\n%s", data, want)
	}
	t.Setenv("SECOND_TOKEN", "x")
	t.Setenv("WEB_TOKEN", "y")
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__second__echo", `{"message":"hi"}`); r.code != ExitOK {
		t.Errorf("the added server: %+v", r)
	}
	for _, name := range []string{"web", "second"} {
		if r := mcpbridge(t, "", "remove", "--config", cfg, name); r.code != ExitOK {
			t.Fatalf("remove %s: %+v", name, r)
		}
	}
	if data, _ := os.ReadFile(cfg); string(data) != commentedConfig {
		t.Errorf("after remove:\n%s\nwant:\n%s", data, commentedConfig)
	}
	if r := mcpbridge(t, "", "remove", "--config", cfg, "parked"); r.code != ExitOK {
		t.Fatalf("remove parked: %+v", r)
	}
	if data, _ := os.ReadFile(cfg); strings.Contains(string(data), "parked") || !strings.Contains(string(data), "# the built-in one") {
		t.Errorf("after removing parked:\n%s", data)
	}
	if r := mcpbridge(t, "", "remove", "--config", cfg, "demo"); r.code != ExitOK {
		t.Fatalf("remove demo: %+v", r)
	}
	if data, _ := os.ReadFile(cfg); string(data) != "# my servers\n\n" {
		t.Errorf("after removing every entry: %q", data)
	}
}

// add --scope project creates ./mcpbridge.yaml when missing, readable by
// its owner only.
func TestAddCreates(t *testing.T) {
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "add", "--scope", "project", "demo", "--", "${MCPBRIDGE_EXE}", "demo-server")
	if r.code != ExitOK || r.stdout != "Added stdio server \"demo\" to mcpbridge.yaml (project scope)\n" {
		t.Fatalf("add: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 1, "b": 1}`); r.code != ExitOK || r.stdout != "2\n" {
		t.Errorf("call: %+v", r)
	}
	// New, the file is its owner's alone: an entry may hold header and
	// env values.
	if st, err := os.Stat("mcpbridge.yaml"); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o600 {
		t.Errorf("the new config file's mode is %v, want 0600", st.Mode().Perm())
	}
	if r := mcpbridge(t, "", "remove", "demo"); r.code != ExitOK {
		t.Fatalf("remove: %+v", r)
	}
	if data, _ := os.ReadFile("mcpbridge.yaml"); string(data) != "" {
		t.Errorf("after removing the last entry: %q", data)
	}
}

// A flow list is rewritten with its comments; an indented block list gets
// the new entry at its own indentation.
func TestAddListStyles(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"# header\n[]\n", "# header\n- id: x\n  name: mcp-client\n  config:\n    serverName: x\n    transport: stdio\n    command: cmd\n"},
		{"  - {id: a, name: mcp-client, config: {serverName: a, transport: stdio, command: a}}",
			"  - {id: a, name: mcp-client, config: {serverName: a, transport: stdio, command: a}}\n  - id: x\n    name: mcp-client\n    config:\n      serverName: x\n      transport: stdio\n      command: cmd\n"},
	} {
		cfg := writeConfig(t, c.before)
		if r := mcpbridge(t, "", "add", "--config", cfg, "x", "--", "cmd"); r.code != ExitOK {
			t.Fatalf("add: %+v", r)
		}
		if data, _ := os.ReadFile(cfg); string(data) != c.after {
			t.Errorf("after add to %q:\n%q\nwant\n%q", c.before, data, c.after)
		}
	}
}

// Bad edits are refused and leave the file as it was.
func TestAddRemoveRefused(t *testing.T) {
	cfg := writeConfig(t, commentedConfig)
	json := writeFile(t, "mcp.json", `{"mcpServers": {}}`)
	notList := writeConfig(t, "a: 1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "--config", cfg, "demo", "--", "x"}, `already has a server "demo" (line 2)`},
		{[]string{"add", "--config", cfg, "bad__name", "--", "x"}, "server \"bad__name\" not added, it would not be valid:\nconfig.serverName: "},
		{[]string{"add", "--config", cfg, "web", "--url", "ftp://x"}, `--url "ftp://x" is not a server's URL: one starts with http:// or https:// (mcpbridge add --config ` + shellQuote(cfg) + ` web --url https://x)`},
		{[]string{"add", "--config", cfg, "x"}, `want a command after --`},
		{[]string{"add", "--config", cfg}, `want NAME -- COMMAND`},
		{[]string{"add", "--config", cfg, "--", "npx", "-y", "some server"}, `add: want the server's NAME before --: mcpbridge add NAME -- npx -y 'some server'`},
		{[]string{"add", "--config", cfg, "x", "--url", "http://x", "--", "cmd"}, `either a URL or a command`},
		{[]string{"add", "--config", cfg, "x", "http://x", "--", "cmd"}, `add: give either a URL or a command after --, not both`},
		{[]string{"add", "--config", cfg, "x", "https://x/mcp", "a"}, `add: give either a URL or a command after --, not both`},
		{[]string{"add", "--config", cfg, "x", "--env", "A=1", "--url", "http://x"}, `--env is for a command`},
		{[]string{"add", "--config", cfg, "x", "--header", "A: 1", "--", "cmd"}, `-H/--header goes with a remote server's URL`},
		{[]string{"add", "--config", cfg, "x", "--header", "bad", "--url", "http://x"}, `add: --header "bad": want 'Name: value'`},
		{[]string{"add", "--config", cfg, "x", "--env", "novalue", "--", "cmd"}, `add: --env "novalue": want NAME=value`},
		{[]string{"remove", "--config", cfg, "nope"}, `has no server "nope"`},
		{[]string{"remove", "--config", cfg}, `want NAME`},
		{[]string{"remove", "--config", json, "a"}, `is a mcpServers JSON; add and remove edit mcpbridge YAML`},
		{[]string{"remove", "--config", notList, "a"}, `the config must be a YAML list of entries`},
		{[]string{"remove", "--config", writeConfig(t, "- [\n"), "a"}, `did not find expected`},
	} {
		if r := mcpbridge(t, "", c.args...); r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
	if data, _ := os.ReadFile(cfg); string(data) != commentedConfig {
		t.Errorf("file changed:\n%s", data)
	}
}

func TestHelpVersionAndSuggestions(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		args     []string
		code     int
		out, not string
	}{
		{[]string{"call", "--help"}, ExitOK, "Usage: mcpbridge call [SOURCE]", "mcpbridge serve"},
		{[]string{"help", "add"}, ExitOK, "--env K=V", "mcpbridge tools"},
		{[]string{"-v", "serve", "-h"}, ExitOK, "--raw-names", "mcpbridge call"},
		{[]string{"--version"}, ExitOK, "mcpbridge 0.1.0 (module ", ""},
		{[]string{"-v", "--version"}, ExitOK, "mcpbridge 0.1.0 (module ", ""},
		{[]string{"version"}, ExitOK, "mcpbridge 0.1.0", ""},
		{[]string{"-v", "--help"}, ExitOK, "mcpbridge import FILE", ""},
		{[]string{"-v", "tools"}, ExitOK, "mcp__demo__echo", ""},
		{[]string{"--config", "nope.yaml", "tools"}, ExitUsage, "", ""},
		{[]string{"call", "-v", "mcp__demo__add", `{"a":1,"b":2}`}, ExitOK, "3", ""},
	} {
		r := mcpbridge(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stdout, c.out) || c.not != "" && strings.Contains(r.stdout, c.not) {
			t.Errorf("%v: exit %d (want %d), stdout:\n%s\nstderr: %s", c.args, r.code, c.code, r.stdout, r.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tols"}, `unknown command "tols": did you mean "tools"?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (see`},
		{[]string{"help", "cal"}, `did you mean "call"?`},
		{[]string{"version", "x"}, `version: unexpected argument "x"`},
		{[]string{"completion"}, `want bash, zsh or fish`},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh"`},
		{[]string{"__complete", "x"}, `want tools, prompts, uris, entries`},
		{[]string{"__complete", "tools", "--config", "nope.yaml"}, `nope.yaml does not exist`},
	} {
		if r := mcpbridge(t, "", c.args...); r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %+v, want %q", c.args, r, c.want)
		}
	}
	for _, c := range []struct{ name, want string }{
		{"echo", `no tool "echo": did you mean mcp__demo__echo?`},
		{"mcp__demo__ehco", `no tool "mcp__demo__ehco": did you mean mcp__demo__echo?`},
		// A server no entry has is named as such, with the servers there
		// are and the tool of one of them with that raw name.
		{"mcp__dmeo__echo", `no tool "mcp__dmeo__echo": no server "dmeo" is configured (servers: demo); did you mean mcp__demo__echo?`},
		{"mcp__everything__echo", `no tool "mcp__everything__echo": no server "everything" is configured (servers: demo); did you mean mcp__demo__echo?`},
		{"mcp__everything__get-sum", `no tool "mcp__everything__get-sum": no server "everything" is configured (servers: demo)`},
	} {
		if r := mcpbridge(t, "", "call", c.name, "{}"); r.code != ExitFailed || !strings.Contains(r.stderr, c.want) {
			t.Errorf("call %s: %+v", c.name, r)
		}
	}
	if r := mcpbridge(t, "", "tools", "mcp__everything__echo"); r.code == 0 || !strings.Contains(r.stderr, `tools: no tool "mcp__everything__echo": no server "everything" is configured (servers: demo); did you mean mcp__demo__echo?`) {
		t.Errorf("tools NAME of a server not configured: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "zzz", "{}"); strings.Contains(r.stderr, "did you mean") {
		t.Errorf("a suggestion for nothing alike: %s", r.stderr)
	}
}

// Each shell's script, loaded by the real shell, completes commands, each
// command's own flags and their values, tool names after call, prompt names
// after prompt, URIs after read and entry names after get, all from the
// config on the line, under whatever name the binary is installed as. zsh's
// completion system needs a terminal, so its builtins are stood in for by
// functions that print what they are given.
func TestShellCompletion(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	cfg := writeConfig(t, commentedConfig)
	everything := everythingConfig(t) // it offers prompts and resources
	for _, prog := range []string{"mcpbridge", "mcpb-dev"} {
		bin := t.TempDir()
		wrapper := "#!/bin/bash\nCLITEST_RUN_MAIN=1 MCPBRIDGE_EXE=" + exe + " exec -a " + prog + " " + exe + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, prog), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		lines := []string{
			prog + " to",
			prog + " -v ca",
			prog + " call --config " + cfg + " mcp__demo__e",
			prog + " completion z",
			prog + " tools --to",
			prog + " call --ti",
			prog + " add --sc",
			prog + " add --scope ",
			prog + " get --config " + cfg + " pa",
			prog + " prompt --config " + everything + " mcp__everything__simple",
			prog + " read --config " + everything + " demo://resource/static/document/f",
			prog + " serve --metr",
		}
		want := []string{"tools", "call", "mcp__demo__echo", "zsh", "--tokens", "--timeout", "--scope",
			"local project user", "parked", "mcp__everything__simple-prompt", "demo://resource/static/document/features.md", "--metrics-addr"}
		if prog != "mcpbridge" { // the prompts and URIs once are enough (each starts the server)
			lines, want = slices.Delete(lines, 9, 11), slices.Delete(want, 9, 11)
		}
		fn := completion.FuncName(prog)
		for _, c := range []struct {
			shell, script string
			args          []string
			line          func(string) string
		}{
			{"bash", "source <(" + prog + " completion bash)\n" +
				"complete_line() { COMP_WORDS=($1); [[ $1 == *' ' ]] && COMP_WORDS+=(''); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); " + fn + "; echo \"${COMPREPLY[*]}\"; }\n",
				[]string{"--norc", "-c"}, func(l string) string { return "complete_line '" + l + "'" }},
			{"zsh", "compdef() { :; }\n" +
				"compadd() { if [[ $1 == -a ]]; then print -l -- ${(P)2}; else [[ $1 == -- ]] && shift; print -l -- \"$@\"; fi }\n" +
				"_describe() { print -l -- ${(P)2%%:*}; }\n_files() { print FILES; }\n" +
				"source <(" + prog + " completion zsh)\n" +
				"complete_line() { words=(${(z)1}); [[ $1 == *' ' ]] && words+=(''); CURRENT=${#words}; " + fn + " | grep -- \"^${words[CURRENT]}\" | tr '\\n' ' ' | sed 's/ $//'; echo; }\n",
				[]string{"-f", "-c"}, func(l string) string { return "complete_line '" + l + "'" }},
			{"fish", prog + " completion fish | source\n", []string{"--no-config", "-c"},
				func(l string) string { return "complete -C '" + l + "' | cut -f1 | sort | string join ' '; true" }},
		} {
			t.Run(prog+"/"+c.shell, func(t *testing.T) {
				t.Parallel() // each shell and its mcpbridge processes are its own
				sh, err := exec.LookPath(c.shell)
				if err != nil {
					// make test installs it (scripts/install-shells.sh).
					mcptest.Unavailable(t, fmt.Sprintf("no %s on this machine", c.shell))
				}
				script := c.script
				for _, l := range lines {
					script += c.line(l) + "\n"
				}
				cmd := exec.Command(sh, append(c.args, script)...)
				cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
				out, err := cmd.CombinedOutput()
				got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
				if err != nil || !cmp.Equal(got, want) {
					t.Errorf("%s: %v\n%s", c.shell, err, cmp.Diff(want, got))
				}
			})
		}
	}
}

// serve reloads another client's config when it changes, as it does its
// own YAML.
func TestServeReloadsForeignConfig(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := func(name string) string {
		return fmt.Sprintf(`%q: {"command": %q, "args": ["demo-server"], "env": {%q: "1"}}`, name, exe, mainEnv)
	}
	cfg := writeFile(t, "mcp.json", `{"mcpServers": {`+server("one")+`}}`)
	cs := serveStdio(t, "--config", cfg)
	waitTools(t, cs, "mcp__one__echo")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {`+server("one")+`, `+server("two")+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "mcp__one__echo", "mcp__two__echo")
}

// serveStdio runs 'mcpbridge serve --stdio ARGS' as a child and connects an
// MCP client to it, closed at the end of the test.
func serveStdio(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := mcpbridgeCommand(t, append([]string{"serve", "--stdio"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Every example the README points at is a valid config, whatever its
// format.
func TestExamplesValidate(t *testing.T) {
	examples, _ := filepath.Glob("../../examples/*")
	if len(examples) < 4 {
		t.Fatalf("examples: %v", examples)
	}
	for _, ex := range examples {
		if r := mcpbridge(t, "", "validate", "--config", ex); r.code != ExitOK || !strings.Contains(r.stdout, ": OK, ") {
			t.Errorf("%s: %+v", ex, r)
		}
	}
}

// A secret written as it is (not a ${VAR}) into a file that may be shared
// (the project's, or one named) is written, with a warning that says
// where and how to keep it out; one written to a file of the user's own
// (local, user), or as a ${VAR}, is not warned of.
func TestAddWarnsOfLiteralSecret(t *testing.T) {
	userScope(t)
	t.Chdir(t.TempDir())
	writeFileAt(t, "mcpbridge.yaml", "[]\n")
	r := mcpbridge(t, "", "add", "db", "-e", "API_KEY=sk-live-123", "-e", "DEBUG=1", "-e", "GITHUB_TOKEN=${GH_TOKEN}", "--", "db-mcp")
	want := `mcpbridge: add: the value of API_KEY is written as it is to mcpbridge.yaml, a file often shared: write it as ${API_KEY} (and export API_KEY), or add the server with --scope local or --scope user` + "\n"
	if r.code != ExitOK || r.stderr != want {
		t.Errorf("add to the project file: %+v\nwant stderr %q", r, want)
	}
	if data, _ := os.ReadFile("mcpbridge.yaml"); !strings.Contains(string(data), "sk-live-123") {
		t.Errorf("the entry was not written as asked:\n%s", data)
	}
	r = mcpbridge(t, "", "add", "web", "https://example.com/mcp", "-H", "Authorization: Bearer abc", "-H", "X-Trace: 1", "-H", "X-Api-Key: ${API_KEY}")
	want = `mcpbridge: add: the value of Authorization is written as it is to mcpbridge.yaml, a file often shared: write it as ${AUTHORIZATION} (and export AUTHORIZATION), or add the server with --scope local or --scope user` + "\n"
	if r.code != ExitOK || r.stderr != want {
		t.Errorf("add of a header to the project file: %+v\nwant stderr %q", r, want)
	}
	r = mcpbridge(t, "", "add-json", "db3", `{"type": "stdio", "command": "db-mcp", "env": {"SLACK_BOT_TOKEN": "xoxb-1"}}`)
	want = `mcpbridge: add-json: the value of SLACK_BOT_TOKEN is written as it is to mcpbridge.yaml, a file often shared: write it as ${SLACK_BOT_TOKEN} (and export SLACK_BOT_TOKEN), or add the server with --scope local or --scope user` + "\n"
	if r.code != ExitOK || r.stderr != want {
		t.Errorf("add-json to the project file: %+v\nwant stderr %q", r, want)
	}
	for _, scope := range []string{"local", "user"} {
		r = mcpbridge(t, "", "add", "--scope", scope, "db2", "-e", "API_KEY=sk-live-123", "--", "db-mcp")
		if r.code != ExitOK || r.stderr != "" {
			t.Errorf("add --scope %s: %+v", scope, r)
		}
	}
	cfg := writeConfig(t, "[]\n")
	r = mcpbridge(t, "", "add", "--config", cfg, "db", "-e", "DB_PASSWORD=hunter2", "--", "db-mcp")
	if r.code != ExitOK || !strings.Contains(r.stderr, "the value of DB_PASSWORD is written as it is to "+cfg+", a file often shared: write it as ${DB_PASSWORD} (and export DB_PASSWORD)\n") {
		t.Errorf("add --config: %+v", r)
	}
}

// add and remove in a directory where no file can be made (a read-only
// or immutable one)
// name the config file and what to do, not the temporary file beside it
// that the atomic replace failed to create; the file is left as it was.
func TestAddRemoveUnwritableDir(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcpbridge.yaml")
	if err := os.WriteFile(cfg, []byte(commentedConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	unwritableDir(t, dir)
	want := cfg + " cannot be replaced: no file can be made in its directory " + dir + " ("
	fix := "), which the replace needs: make the directory writable"
	for _, args := range [][]string{{"add", "--config", cfg, "x", "--", "cmd"}, {"remove", "--config", cfg, "demo"}} {
		r := mcpbridge(t, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, fix) || strings.Contains(r.stderr, ".mcpbridge.yaml.") {
			t.Errorf("%v: exit %d\nstderr %s\nwant %s", args, r.code, r.stderr, want)
		}
	}
	if data, _ := os.ReadFile(cfg); string(data) != commentedConfig {
		t.Errorf("file changed:\n%s", data)
	}
}

// unwritableDir makes dir a directory in which no file can be made until
// the test ends: read-only for a user, immutable (chattr +i) for root,
// whom permissions do not stop.
func unwritableDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		mcptest.Unavailable(t, fmt.Sprintf("chattr +i %s (root needs it for a directory it cannot write): %v %s", dir, err, out))
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}
