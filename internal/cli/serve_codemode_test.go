package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// codeModeGateway is a gateway entry for serve --code-mode over
// everythingAgentConfig: the static token of GW_CODE_AUTH is "coder",
// who may run programs and call every tool but filesystem's write_file.
const codeModeGateway = `- id: gw
  name: gateway
  config:
    auth: {tokens: {coder: GW_CODE_AUTH}}
    policy:
      - subjects: [coder]
        allow: ["*"]
        deny: [mcp__filesystem__write_file]
    audit: {file: %s}
`

// nodeListCall is what a node client script prints: the tools it was
// listed and the result of its call.
type nodeListCall struct {
	Tools []string `json:"tools"`
	Call  struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"call"`
}

// nodeRunCode runs one run_code call of program with the TypeScript SDK's
// client, and returns the tools it was listed and the call's text.
func nodeRunCode(t *testing.T, url, token, program string) (tools []string, text string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"code": program})
	out, _ := runNodeScript(t, "node_bearer.mjs", url, token, "run_code", string(args))
	var got nodeListCall
	if err := json.Unmarshal(out, &got); err != nil || len(got.Call.Content) != 1 {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	if got.Call.IsError {
		t.Fatalf("run_code failed: %s", got.Call.Content[0].Text)
	}
	return got.Tools, got.Call.Content[0].Text
}

// serve --code-mode with the TypeScript SDK's client over the real
// server-everything and server-filesystem: the client is listed the three
// tools of code mode, and one run_code call reads two files, adds their
// numbers with get-sum and returns a summary. Each inner call passes the
// gateway entry as the caller: the tool its policy denies is unknown to
// the program (and to its API), and the audit trail has one line per
// inner call, tied to the run_code call that made it.
func TestServeCodeModeEverything(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.txt": "12", "b.txt": "30"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := everythingAgentConfig(t, dir)
	if err := os.WriteFile(cfg, fmt.Appendf(must(os.ReadFile(cfg)), codeModeGateway, trail), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServing(t, []string{"GW_CODE_AUTH=code-token"}, "serve", "--http", "127.0.0.1:0", "--code-mode", "--config", cfg)

	tools, text := nodeRunCode(t, p.url, "code-token", sumProgram(dir))
	if d := cmp.Diff([]string{"describe_api", "run_code", "search_api"}, tools); d != "" {
		t.Errorf("serve --code-mode lists (-want +got):\n%s", d)
	}
	for _, want := range []string{"read 12 and 30", `"a":"12"`, `"b":"30"`, "42"} {
		if !strings.Contains(text, want) {
			t.Errorf("run_code answered %q, want it to hold %q", text, want)
		}
	}

	_, text = nodeRunCode(t, p.url, "code-token", fmt.Sprintf(`let refused = "";
try { await tools.call("mcp__filesystem__write_file", {path: %q, content: "x"}); } catch (e) { refused = String(e); }
const dirs = await tools.filesystem.list_allowed_directories({});
return {refused, declared: typeof tools.filesystem.write_file, dirs: dirs.isError}`, filepath.Join(dir, "c.txt")))
	var got struct {
		Refused, Declared string
		Dirs              bool
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("run_code answered %q: %v", text, err)
	}
	if !strings.Contains(got.Refused, `unknown tool "mcp__filesystem__write_file"`) || got.Declared != "undefined" || got.Dirs {
		t.Errorf("the denied tool: %+v, want it unknown to the program and absent from its API", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied write ran: %v", err)
	}
	p.stop(t)

	checkCodeModeTrail(t, trail)
}

// checkCodeModeTrail checks the trail of TestServeCodeModeEverything: two
// run_code lines, and the inner calls of each tied to it.
func checkCodeModeTrail(t *testing.T, trail string) {
	t.Helper()
	data, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	type line struct{ name, outcome, parent string }
	var inner []line
	var programs []string
	for l := range strings.Lines(string(data)) {
		var e audit.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if e.Identity != "coder" {
			t.Errorf("audit line of %q by %q, want the caller coder", e.Name, e.Identity)
		}
		if e.Name == "run_code" {
			programs = append(programs, e.Call)
			continue
		}
		inner = append(inner, line{e.Name, e.Outcome, e.Parent})
	}
	if len(programs) != 2 || programs[0] == "" || programs[1] == "" || programs[0] == programs[1] {
		t.Fatalf("run_code lines with call ids %q, want two, each its own id\n%s", programs, data)
	}
	read, sum := "mcp__filesystem__read_text_file", "mcp__everything__get-sum"
	want := []line{{read, "ok", programs[0]}, {read, "ok", programs[0]}, {sum, "ok", programs[0]},
		{"mcp__filesystem__write_file", "denied", programs[1]}, {"mcp__filesystem__list_allowed_directories", "ok", programs[1]}}
	if d := cmp.Diff(want, inner, cmp.AllowUnexported(line{})); d != "" {
		t.Errorf("inner calls' audit lines (-want +got):\n%s", d)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
