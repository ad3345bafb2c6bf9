package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The client requirement sets of the conformance suite 0.2 (frozen per
// spec revision: 32 scenarios of 2026-07-28, 18 of 2025-11-25), as
// `conformance list --client --requirements REV` lists them, each run
// against mcpbridge's CLI through one dispatcher (the re-executed test
// binary, runConformanceClient): every scenario of the set passes. The
// scenarios run side by side (as runClientScenarios does), sse-retry
// alone first, since it times the client's reconnection.
func TestConformanceClientRequirements(t *testing.T) {
	t.Parallel()
	suite := conformanceNextSuite(t)
	bin := plainMcpbridge(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(suite[0])+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, rev := range []struct {
		name string
		want int
	}{{"2026-07-28", 32}, {"2025-11-25", 18}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			names := mcptest.RequiredScenarios(t, suite, env, "client", rev.name)
			if len(names) != rev.want {
				t.Fatalf("the %s set requires %d client scenarios, want %d: %v", rev.name, len(names), rev.want, names)
			}
			var scenarios []clientScenario
			for _, name := range names {
				scenarios = append(scenarios, clientScenario{name, exe})
			}
			runClientScenarios(t, suite, bin, scenarios)
		})
	}
}

// conformanceNextSuite is the command line of the conformance suite 0.2
// (package.json's alias conformance-next): Node 22 and its entry point.
func conformanceNextSuite(t *testing.T) []string {
	t.Helper()
	node := mcptest.ThirdPartyBin(t, "node")
	suite := filepath.Join(filepath.Dir(filepath.Dir(node)), "conformance-next", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("conformance 0.2 is not installed (%v); run scripts/install-thirdparty.sh", err)
	}
	return []string{node, suite}
}

// fixedClientCommands are the scenarios whose server expects one given
// call (the suite's fixed tool names, or an elicitation answered with
// its defaults): mcpbridge's arguments, before --url URL.
var fixedClientCommands = map[string][]string{
	"initialize":                          {"tools"},
	"tools_call":                          {"call", "mcp__remote__add_numbers", `{"a":2,"b":3}`},
	"sse-retry":                           {"call", "mcp__remote__test_reconnection"},
	"elicitation-sep1034-client-defaults": {"call", "--name", "remote", "--elicit", "defaults", "mcp__remote__test_client_elicitation_defaults", "{}"},
}

// runPlainScenario plays a client scenario that is not about auth with
// the mcpbridge bin, against the scenario's url: its fixed command, else
// the calls the scenario's context lists (toolCalls), else a call of
// every tool the server lists, with no arguments.
func runPlainScenario(bin, scenario, url, context string) error {
	if args, ok := fixedClientCommands[scenario]; ok {
		return runBridge(bin, append(args, "--url", url)...)
	}
	var c struct {
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	}
	if context != "" {
		if err := json.Unmarshal([]byte(context), &c); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	calls := c.ToolCalls
	if len(calls) == 0 {
		names, err := listedTools(bin, url)
		if err != nil {
			return err
		}
		for _, name := range names {
			calls = append(calls, struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}{Name: name})
		}
	}
	var failed []string
	for _, call := range calls {
		args := string(call.Arguments)
		if args == "" || args == "null" {
			args = "{}"
		}
		// A tool's error is the scenario's to judge; the call goes on.
		if err := runBridge(bin, "call", "--url", url, "mcp__remote__"+call.Name, args); err != nil {
			failed = append(failed, call.Name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		fmt.Fprintln(os.Stderr, "calls that failed:", strings.Join(failed, "; "))
	}
	return nil
}

// listedTools is the raw names of the tools the server at url lists.
func listedTools(bin, url string) ([]string, error) {
	out, err := exec.CommandContext(context.Background(), bin, "tools", "--json", "--url", url).Output()
	if err != nil {
		return nil, fmt.Errorf("mcpbridge tools --url %s: %w", url, err)
	}
	var tools []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal(out, &tools); err != nil {
		return nil, fmt.Errorf("mcpbridge tools --json: %w", err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, strings.TrimPrefix(tl.Function.Name, "mcp__remote__"))
	}
	return names, nil
}

// runBridge runs the mcpbridge bin with args, its output the scenario's.
func runBridge(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}
