package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// End to end against servers we did not write: the official reference
// servers from npm (docs/upstream.md §8.4 cases 113–119), installed by `make test`
// from the committed lockfile.

func everythingConfig(t *testing.T) string {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	return writeConfig(t, fmt.Sprintf(`- id: everything
  name: mcp-client
  config:
    serverName: everything
    transport: stdio
    command: %s
    args: [stdio]
    toolCallTimeoutMs: 30000
`, bin))
}

func TestServerEverything(t *testing.T) {
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "tools", "--json", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("tools: exit %d\n%s", r.code, r.stderr)
	}
	var tools []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Function.Name] = true
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image", "mcp__everything__get-structured-content"} {
		if !names[want] {
			t.Errorf("%s missing from %v", want, names)
		}
	}
	if len(tools) < 8 {
		t.Errorf("only %d tools", len(tools))
	}

	saveDir := t.TempDir()
	calls := []struct {
		name, args string
		code       int
		has        []string
	}{
		{"mcp__everything__echo", `{"message":"hello"}`, 0, []string{"Echo: hello"}},
		{"mcp__everything__get-sum", `{"a":3,"b":7}`, 0, []string{"10"}},
		{"mcp__everything__get-tiny-image", `{}`, 0, []string{"[image saved: " + saveDir + "/"}},
		{"mcp__everything__echo", `{}`, 1, []string{"Error: "}},
	}
	for _, c := range calls {
		r := mcpbridge(t, "", "call", "--config", cfg, "--save-dir", saveDir, c.name, c.args)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, r.code, c.code, r.stdout, r.stderr)
		}
		for _, h := range c.has {
			if !strings.Contains(r.stdout, h) {
				t.Errorf("%s: stdout %q lacks %q", c.name, r.stdout, h)
			}
		}
	}

	// Structured output arrives in the canonical value, validated against
	// the tool's outputSchema.
	r = mcpbridge(t, "", "call", "--json", "--config", cfg, "mcp__everything__get-structured-content", `{"location":"New York"}`)
	var res struct {
		IsError bool `json:"isError"`
		Value   struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.IsError || res.Value.StructuredContent["temperature"] == nil {
		t.Errorf("get-structured-content: %v %s %s", err, r.stdout, r.stderr)
	}
}

func TestServerFilesystem(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`- id: fs
  name: mcp-client
  config:
    serverName: filesystem
    transport: stdio
    command: %s
    args: [%q]
    roots: [%[2]q]
`, bin, dir))
	file := filepath.Join(dir, "note.txt")
	args, _ := json.Marshal(map[string]string{"path": file, "content": "written through mcpbridge"})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__write_file", string(args)); r.code != 0 {
		t.Fatalf("write_file: %+v", r)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "written through mcpbridge" {
		t.Fatalf("file on disk: %q, %v", b, err)
	}
	args, _ = json.Marshal(map[string]string{"path": file})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__read_text_file", string(args)); r.code != 0 || !strings.Contains(r.stdout, "written through mcpbridge") {
		t.Errorf("read_text_file: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "listed.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ = json.Marshal(map[string]string{"path": dir})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__list_directory", string(args)); r.code != 0 || !strings.Contains(r.stdout, "listed.txt") {
		t.Errorf("list_directory: %+v", r)
	}
	args, _ = json.Marshal(map[string]string{"path": "/etc/passwd"})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__read_text_file", string(args)); r.code != 1 || !strings.Contains(r.stdout, "Error: ") {
		t.Errorf("outside the allowed dir: %+v", r)
	}
}

// The official conformance suite's client scenarios, driven through the
// real mcpbridge binary with --url (the suite appends the URL).
func TestConformanceClient(t *testing.T) {
	conformance := mcptest.ThirdPartyBin(t, "conformance")
	bin := filepath.Join(t.TempDir(), "mcpbridge")
	build := exec.Command("go", "build", "-o", bin, "github.com/mcpbridge/mcpbridge/cmd/mcpbridge")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building mcpbridge: %v\n%s", err, out)
	}
	scenarios := []struct{ name, command string }{
		{"initialize", bin + " tools --url"},
		{"tools_call", bin + ` call mcp__remote__add_numbers '{"a":2,"b":3}' --url`},
		{"sse-retry", bin + " call mcp__remote__test_reconnection --url"},
		{"elicitation-sep1034-client-defaults", bin + ` call --name c --elicit defaults mcp__c__test_client_elicitation_defaults '{}' --url`},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, conformance, "client", "--command", sc.command, "--scenario", sc.name)
			// The suite needs Node 22, which the lockfile ships beside it.
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(conformance)+string(os.PathListSeparator)+os.Getenv("PATH"))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if err != nil || !strings.Contains(out.String(), "OVERALL: PASSED") {
				t.Errorf("scenario %s: %v\n%s", sc.name, err, out.String())
			}
		})
	}
}
