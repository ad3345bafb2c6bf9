package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/internal/report"
)

// list shows every entry and where it comes from, starting nothing (the
// broken command would fail to start).
func TestList(t *testing.T) {
	inDir(t, demoEntry+brokenEntry+`- id: parked
  name: mcp-client
  disabled: true
  config: {serverName: parked, transport: stdio, command: no-such-server-xyz}
`)
	r := mcpbridge(t, "", "list")
	want := `ID      PLUGIN      SERVER  TRANSPORT  STATE     ORIGIN
demo    mcp-client  demo    stdio      enabled   mcpbridge.yaml:1
github  mcp-client  github  stdio      invalid   mcpbridge.yaml:8
parked  mcp-client  parked  stdio      disabled  mcpbridge.yaml:16
`
	if r.code != ExitOK || r.stdout != want || !strings.Contains(r.stderr, brokenAt) {
		t.Errorf("list: exit %d\n%s\nwant:\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	r = mcpbridge(t, "", "list", "--json")
	var got []report.Entry
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 3 {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	if got[1].State != "invalid" || got[1].Origin != "mcpbridge.yaml:8" || !strings.HasPrefix(got[1].Error, brokenAt) {
		t.Errorf("list --json: %+v", got[1])
	}
}

// get shows one entry: its transport, command or URL as written, and the
// names of its headers and env, never their values.
func TestGet(t *testing.T) {
	t.Setenv("GET_TEST_SECRET", "hunter2")
	inDir(t, `- id: web
  name: mcp-client
  config:
    serverName: web
    transport: streamable-http
    url: https://${GET_TEST_HOST:-example.com}/mcp
    headers: {Authorization: "Bearer ${GET_TEST_SECRET}", X-Plain: visible-but-not-shown}
    roots: [/srv/data]
- id: cmd
  name: mcp-client
  config: {serverName: tool, transport: stdio, command: run-it, args: [--key, "${GET_TEST_SECRET}"], env: {TOKEN: "${GET_TEST_SECRET}"}}
`)
	r := mcpbridge(t, "", "get", "web")
	want := `id:         web
plugin:     mcp-client
serverName: web
state:      enabled
origin:     mcpbridge.yaml:1
transport:  streamable-http
url:        https://${GET_TEST_HOST:-example.com}/mcp
headers:    Authorization, X-Plain
roots:      ["/srv/data"]
`
	if r.code != ExitOK || r.stdout != want {
		t.Errorf("get web: exit %d\n%s\nwant:\n%s\n%s", r.code, r.stdout, want, r.stderr)
	}
	r = mcpbridge(t, "", "get", "--json", "tool")
	var got report.EntryDetail
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("get --json: %v\n%s", err, r.stdout)
	}
	if diff := cmp.Diff([]string{"--key", "${GET_TEST_SECRET}"}, got.Args); diff != "" || got.Command != "run-it" || !cmp.Equal(got.Env, []string{"TOKEN"}) {
		t.Errorf("get --json: %+v %s", got, diff)
	}
	for _, out := range []string{r.stdout, mcpbridge(t, "", "get", "web").stdout} {
		if strings.Contains(out, "hunter2") || strings.Contains(out, "visible-but-not-shown") {
			t.Errorf("get shows a value:\n%s", out)
		}
	}
	r = mcpbridge(t, "", "get", "tol")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `no server "tol" in mcpbridge.yaml: did you mean "tool"?`) {
		t.Errorf("get tol: %+v", r)
	}
}

// add-json takes Claude Code's JSON for one server.
func TestAddJSON(t *testing.T) {
	userScope(t)
	inDir(t, "# my servers\n")
	r := mcpbridge(t, "", "add-json", "demo", `{"type": "stdio", "command": "${MCPBRIDGE_EXE}", "args": ["demo-server"], "env": {"K": "v"}}`)
	if r.code != ExitOK || r.stdout != "Added stdio server \"demo\" to mcpbridge.yaml (project scope)\n" {
		t.Fatalf("add-json: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "mcp__demo__add", `{"a": 1, "b": 4}`); r.code != ExitOK || r.stdout != "5\n" {
		t.Errorf("call: %+v", r)
	}
	r = mcpbridge(t, "", "add-json", "web", `{"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}, "alwaysAllow": []}`)
	if r.code != ExitOK || !strings.Contains(r.stderr, "alwaysAllow: not used by mcpbridge") {
		t.Errorf("add-json http: %+v", r)
	}
	if data, _ := os.ReadFile("mcpbridge.yaml"); !strings.HasPrefix(string(data), "# my servers\n") || !strings.Contains(string(data), "transport: streamable-http") {
		t.Errorf("the file:\n%s", data)
	}
	for _, bad := range []string{`[1]`, `{"type":`, `{"type": "http", "url": "ftp://x"}`} {
		if r := mcpbridge(t, "", "add-json", "x", bad); r.code != ExitUsage {
			t.Errorf("add-json %s: %+v", bad, r)
		}
	}
	// A name the converter makes valid (docs.v2 → docs-v2) is checked and
	// named as added: an invalid server under it is refused like any
	// other, the file left as it was. It used to be written unchecked.
	before, _ := os.ReadFile("mcpbridge.yaml")
	if r := mcpbridge(t, "", "add-json", "docs.v2", `{"type": "http", "url": "ftp://x/mcp"}`); r.code != ExitUsage || !strings.Contains(r.stderr, `server "docs-v2" not added, it would not be valid`) {
		t.Errorf("add-json of an invalid server under a name made valid: %+v", r)
	}
	if after, _ := os.ReadFile("mcpbridge.yaml"); string(after) != string(before) {
		t.Errorf("the refused add-json changed the file:\n%s", after)
	}
	r = mcpbridge(t, "", "add-json", "docs.v2", `{"type": "http", "url": "https://example.com/docs"}`)
	if r.code != ExitOK || r.stdout != "Added streamable-http server \"docs-v2\" to mcpbridge.yaml (project scope)\n" || !strings.Contains(r.stderr, `"docs.v2" is added as "docs-v2"`) {
		t.Errorf("add-json under a name made valid: %+v", r)
	}
}

// add-json refuses a server whose JSON has a key misspelt (the one it
// is close to missing), naming the key and the one meant, and writes
// nothing: the server it would add is not the one meant (a misspelt
// "header" drops the credential, a misspelt "argz" the arguments).
func TestAddJSONMisspeltKeyRefused(t *testing.T) {
	userScope(t)
	for _, c := range []struct{ json, want string }{
		{`{"url": "http://127.0.0.1:1/mcp", "header": {"Authorization": "Bearer x"}}`, `header: unknown field: did you mean "headers"?`},
		{`{"command": "npx", "argz": ["x"]}`, `argz: unknown field: did you mean "args"?`},
		{`{"comand": "npx", "args": ["x"]}`, `comand: unknown field: did you mean "command"?`},
	} {
		inDir(t, "# my servers\n")
		r := mcpbridge(t, "", "add-json", "web", c.json)
		want := "mcpbridge: server \"web\" not added, it would not be valid:\n" + c.want + "\n"
		if r.code != ExitUsage || r.stderr != want || r.stdout != "" {
			t.Errorf("add-json %s: %+v\nwant stderr %q", c.json, r, want)
		}
		if data, _ := os.ReadFile("mcpbridge.yaml"); string(data) != "# my servers\n" {
			t.Errorf("add-json %s changed the file:\n%s", c.json, data)
		}
	}
}

// everyKind is one entry of each kind, and one of a kind misspelt.
const everyKind = `- id: demo
  name: mcp-client
  config: {serverName: demo, transport: stdio, command: x}
- id: gw
  name: gateway
  config: {policy: [{subjects: [anonymous], allow: ["*"]}]}
- id: perms
  name: permissions
  config: {allow: [mcp__demo__add]}
- id: llm
  name: model
  config: {baseURL: "http://127.0.0.1:1", model: m, apiKeyEnv: ""}
- id: search
  name: tool-search
  config: {}
- id: odd
  name: gatway
  config: {}
`

// list's table names each entry's kind in a column of its own, and a
// server name only for a server's entry: a gateway entry's row read
// "gw  gateway", its kind where the server belongs. list --json stays as
// it was (a public contract: serverName is each entry's display name).
func TestListNamesEachEntrysKind(t *testing.T) {
	inDir(t, everyKind)
	r := mcpbridge(t, "", "list")
	want := `ID      PLUGIN       SERVER  TRANSPORT  STATE    ORIGIN
demo    mcp-client   demo    stdio      enabled  mcpbridge.yaml:1
gw      gateway      -       -          enabled  mcpbridge.yaml:4
perms   permissions  -       -          enabled  mcpbridge.yaml:7
llm     model        -       -          enabled  mcpbridge.yaml:10
search  tool-search  -       -          enabled  mcpbridge.yaml:13
odd     gatway       -       -          invalid  mcpbridge.yaml:16
`
	if r.code != ExitOK || r.stdout != want {
		t.Errorf("list: exit %d\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
	r = mcpbridge(t, "", "list", "--json")
	var got []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("list --json: %v\n%s", err, r.stdout)
	}
	for i, w := range [][4]string{
		{"demo", "mcp-client", "demo", "stdio"}, {"gw", "gateway", "gateway", ""}, {"perms", "permissions", "permissions", ""},
		{"llm", "model", "model", ""}, {"search", "tool-search", "tool-search", ""}, {"odd", "gatway", "odd", ""},
	} {
		if i >= len(got) || got[i]["id"] != w[0] || got[i]["plugin"] != w[1] || got[i]["serverName"] != w[2] || got[i]["transport"] != w[3] {
			t.Errorf("list --json entry %d: %v, want id, plugin, serverName and transport %q", i, got, w)
		}
	}
}
