package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	// The tests chdir; the golden files are beside this source file.
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "testdata")
	path := filepath.Join(dir, name)
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// inDir runs the test in a fresh directory holding mcpbridge.yaml with src,
// so messages show the relative name "mcpbridge.yaml".
func inDir(t *testing.T, src string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcpbridge.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
}

// mixedConfig has one entry of each kind of outcome: a working stdio
// server, one whose command does not exist, a process that never speaks
// MCP (it hangs in initialize), and a disabled one.
const mixedConfig = `- id: demo
  name: mcp-client
  config:
    serverName: demo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
- id: broken
  name: mcp-client
  config:
    serverName: broken
    transport: stdio
    command: no-such-mcp-server-xyz
- id: mute
  name: mcp-client
  config:
    serverName: mute
    transport: stdio
    command: sleep
    args: ["3600"]
    startupTimeoutMs: 300
- id: off
  name: mcp-client
  disabled: true
  config:
    serverName: off
`

// timing matches the numbers that change from run to run.
var timing = regexp.MustCompile(`"(connectMs|discoverMs|elapsedMs)": \d+`)

func TestStatusJSON(t *testing.T) {
	inDir(t, mixedConfig)
	r := mcpbridge(t, "", "status", "--json")
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1 (not every server is ready)\nstderr: %s", r.code, r.stderr)
	}
	if r.stderr != "" {
		t.Errorf("--json wrote to stderr: %q", r.stderr)
	}
	var shape report.Status
	if err := json.Unmarshal([]byte(r.stdout), &shape); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	if d := shape.Servers[0].Timings; d.ConnectMs+d.DiscoverMs == 0 && shape.ElapsedMs == 0 {
		t.Errorf("no timings for the ready server: %+v", shape.Servers[0])
	}
	golden(t, "status.json", timing.ReplaceAllString(r.stdout, `"$1": 0`))
}

func TestStatusTable(t *testing.T) {
	inDir(t, mixedConfig)
	r := mcpbridge(t, "", "status", "--timings")
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	norm := regexp.MustCompile(`\d+(\.\d)?ms`).ReplaceAllString(r.stdout, "Nms")
	norm = regexp.MustCompile(` +`).ReplaceAllString(norm, " ")
	golden(t, "status.txt", norm)
	for _, want := range []string{"1 of 3 servers ready (1 disabled) in ", "\nready in "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "slowest server") {
		t.Errorf("a slowest server named with one server connected:\n%s", r.stderr)
	}
}

// The acceptance run: ten servers, fast, slow, broken, hanging and
// disabled. Every state is shown; the slow ones start in parallel (their
// handshakes wait for each other), so the slowest one does not hold back
// the others.
func TestStatusTenServers(t *testing.T) {
	barrier := mcptest.NewBarrier(3)
	var cfg strings.Builder
	entry := func(id, body string) {
		fmt.Fprintf(&cfg, "- id: %s\n  name: mcp-client\n  config:\n    serverName: %s\n%s", id, id, body)
	}
	for i := range 4 {
		entry(fmt.Sprintf("fast%d", i), "    transport: stdio\n    command: ${MCPBRIDGE_EXE}\n    args: [demo-server]\n")
	}
	for i := range 3 {
		srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
		mcptest.HoldHandshake(srv, barrier.Hold)
		hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{})
		entry(fmt.Sprintf("slow%d", i), fmt.Sprintf("    transport: streamable-http\n    url: %s\n    startupTimeoutMs: 60000\n", hs.URL))
	}
	entry("broken", "    transport: stdio\n    command: no-such-mcp-server-xyz\n")
	entry("mute", "    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    startupTimeoutMs: 300\n")
	entry("off", "    transport: stdio\n    command: x\n")
	src := strings.Replace(cfg.String(), "- id: off\n", "- id: off\n  disabled: true\n", 1)
	inDir(t, src)

	r := mcpbridge(t, "", "status", "--json", "--timings")
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	var got report.Status
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	states := map[string]string{}
	for _, s := range got.Servers {
		states[s.ID] = s.State
		if s.State == "ready" && (s.Server == nil || s.Tools == 0 || s.ProtocolVersion == "") {
			t.Errorf("%s: ready but incomplete: %+v", s.ID, s)
		}
	}
	want := map[string]string{
		"fast0": "ready", "fast1": "ready", "fast2": "ready", "fast3": "ready",
		"slow0": "ready", "slow1": "ready", "slow2": "ready",
		"broken": "failed", "mute": "timed-out", "off": "disabled",
	}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`ready in \d+(\.\d)?ms; slowest server \w+ \(\d+(\.\d)?ms\); one after another the 7 servers would have taken at least \d+(\.\d)?ms`).MatchString(r.stderr) {
		t.Errorf("no timing summary on stderr:\n%s", r.stderr)
	}
}

// tools --timings shows each server's phases on stderr; stdout stays the
// tool list.
func TestToolsTimings(t *testing.T) {
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "tools", "--json", "--timings")
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var tools []chatTool
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) != 3 {
		t.Errorf("stdout is not the tools array: %v\n%s", err, r.stdout)
	}
	if !regexp.MustCompile(`(?m)^SERVER +STATE +CONNECT +DISCOVER\ndemo +ready +\d+(\.\d)?ms +\d+(\.\d)?ms\nready in \d+(\.\d)?ms\n$`).MatchString(r.stderr) {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

func TestStatusUsage(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"status", "extra"}, {"status", "--bogus"}, {"validate", "extra"}, {"validate", "--url", "http://x"}} {
		if r := mcpbridge(t, "", args...); r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-h"}, "Usage: mcpbridge status [SOURCE]"},
		{[]string{"validate", "--help"}, "Usage: mcpbridge validate [--config FILE]"},
	} {
		if r := mcpbridge(t, "", c.args...); r.code != ExitOK || !strings.Contains(r.stdout, c.want) {
			t.Errorf("%v: exit %d\n%s", c.args, r.code, r.stdout)
		}
	}
	// status on a working config exits 0.
	if r := mcpbridge(t, "", "status"); r.code != ExitOK || !strings.Contains(r.stderr, "1 of 1 servers ready in ") {
		t.Errorf("status on the embedded default: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
