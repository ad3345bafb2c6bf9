package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/term"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
)

// mainEnv makes a re-executed test binary behave as the mcpbridge command,
// so the embedded default config (which runs `${MCPBRIDGE_EXE} demo-server`)
// works in tests. The name survives the child environment scrub.
const mainEnv = "CLITEST_RUN_MAIN"

func TestMain(m *testing.M) {
	// A fixture child of a re-executed mcpbridge inherits mainEnv too, so
	// the fixture checks come first.
	skillpeer.RunIfChild()
	mcppeer.RunIfChild()
	if os.Getenv(browserEnv) == "1" && len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "http") {
		os.Exit(runBrowser())
	}
	if bin := os.Getenv(conformanceEnv); bin != "" {
		os.Exit(runConformanceClient(bin))
	}
	if os.Getenv(rootsGateEnv) == "1" {
		os.Exit(runRootsGate(os.Args[1:]))
	}
	if os.Getenv(mainEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), StopSignals()...)
		code := Main(ctx, IO{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())), StdinIsTerminal: term.IsTerminal(int(os.Stdin.Fd()))})
		stop()
		os.Exit(code)
	}
	// No test reads the user config of the machine it runs on; those
	// about the user scope set their own.
	os.Setenv("XDG_CONFIG_HOME", "/dev/null/mcpbridge-tests") // never a directory, even for root
	// The processes the tests start from this binary (the embedded
	// default's demo server, ${MCPBRIDGE_EXE} in configs) act as mcpbridge.
	// Set once here rather than per test, so tests can run in parallel.
	os.Setenv(mainEnv, "1")
	defer removePlainBinary() // runs only when VerifyTestMain returns; see its exit below
	mcptest.VerifyTestMain(m)
}

type run struct {
	code           int
	stdout, stderr string
}

// mcpbridge runs the command in-process. MCPBRIDGE_EXE is this test binary
// acting as mcpbridge; extraEnv adds variables for ${VAR} expansion.
func mcpbridge(t *testing.T, stdin string, args ...string) run {
	t.Helper()
	return mcpbridgeWith(t, nil, stdin, args...)
}

// mcpbridgeWith is mcpbridge with the run's IO changed by edit (nil: as
// it is) before it starts.
func mcpbridgeWith(t *testing.T, edit func(*IO), stdin string, args ...string) run {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	io := IO{
		Args:   args,
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errOut,
		LookupEnv: func(k string) (string, bool) {
			if k == "MCPBRIDGE_EXE" {
				return exe, true
			}
			if k == "MCPBRIDGE_CONFIG" {
				return "", false // the embedded default, whatever the machine has
			}
			return os.LookupEnv(k)
		},
	}
	if edit != nil {
		edit(&io)
	}
	return run{Main(ctx, io), out.String(), errOut.String()}
}

func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var publicName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// The quick start: `mcpbridge tools` on the embedded default.
func TestToolsOnEmbeddedDefault(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./mcpbridge.yaml
	r := mcpbridge(t, "", "tools")
	if r.code != ExitOK {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	for _, name := range []string{"mcp__demo__add", "mcp__demo__echo", "mcp__demo__weather"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("stdout lacks %s:\n%s", name, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "3 tools from 1 of 1 servers") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// tools --json is a chat-completions tools array, pasteable as is.
func TestToolsJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "tools", "--json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string                     `json:"name"`
			Description string                     `json:"description"`
			Parameters  map[string]json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatalf("not a JSON tools array: %v\n%s", err, r.stdout)
	}
	if len(tools) != 3 {
		t.Fatalf("%d tools", len(tools))
	}
	for _, tl := range tools {
		if tl.Type != "function" || !publicName.MatchString(tl.Function.Name) || tl.Function.Description == "" || string(tl.Function.Parameters["type"]) != `"object"` {
			t.Errorf("bad entry %+v", tl)
		}
	}
	if r.stderr != "" {
		t.Errorf("--json wrote to stderr: %q", r.stderr)
	}
}

func TestCall(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string // exact, or a prefix when it ends with "…"
		stderrHas  string
		stdoutJSON bool
	}{
		{name: "text", args: []string{"call", "mcp__demo__add", `{"a":2,"b":3}`}, code: 0, stdout: "5\n"},
		{name: "stdin args", stdin: `{"message":"hi"}`, args: []string{"call", "mcp__demo__echo", "-"}, code: 0, stdout: "Echo: hi\n"},
		{name: "unknown tool", args: []string{"call", "mcp__demo__nope"}, code: 1, stdout: "Error: unknown tool \"mcp__demo__nope\"\n"},
		{name: "unknown server", args: []string{"call", "mcp__zzz__nope"}, code: 1, stdout: "Error: unknown tool \"mcp__zzz__nope\"\n"},
		{name: "bad json", args: []string{"call", "mcp__demo__add", `{"a":`}, code: 2, stderrHas: "arguments are not valid JSON"},
		{name: "no name", args: []string{"call"}, code: 2, stderrHas: "want NAME"},
		{name: "json", args: []string{"call", "--json", "mcp__demo__weather", `{"city":"Paris"}`}, code: 0, stdoutJSON: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mcpbridge(t, tc.stdin, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.stdout != "" && r.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.stdout, tc.stdout)
			}
			if !strings.Contains(r.stderr, tc.stderrHas) {
				t.Errorf("stderr = %q, want %q", r.stderr, tc.stderrHas)
			}
			if tc.stdoutJSON {
				var res struct {
					IsError bool `json:"isError"`
					Content []struct{ Type, Text string }
					Value   struct {
						Content           []json.RawMessage `json:"content"`
						StructuredContent map[string]any    `json:"structuredContent"`
					} `json:"value"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
					t.Fatalf("call --json: %v\n%s", err, r.stdout)
				}
				if res.IsError || len(res.Content) != 1 || res.Value.StructuredContent["city"] != "Paris" {
					t.Errorf("call --json = %s", r.stdout)
				}
			}
		})
	}
}

// Bad config and usage are exit 2 with file:line and entry.
func TestConfigAndUsageErrors(t *testing.T) {
	bad := writeConfig(t, `- id: a
  name: mcp-client
  config:
    serverName: a
    transport: stdio
    command: x
    toolCallTimeoutMs: 0
- id: b
  name: no-such-plugin
- id: c
  name: mcp-client
  config:
    serverName: a
    transport: stdio
    command: y
    env:
      TOKEN: ${SURELY_UNSET_VAR_123}
`)
	tests := []struct {
		args []string
		has  []string
	}{
		{[]string{"validate", "--config", bad}, []string{bad + ":7:", `entry "a"`, "toolCallTimeoutMs", bad + ":9:", "no-such-plugin", `SURELY_UNSET_VAR_123`}},
		{[]string{"tools", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, []string{"does not exist"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
		{[]string{"tools", "--bogus"}, []string{"unknown flag --bogus (see 'mcpbridge help tools')"}},
		{[]string{"tools", "--jsn"}, []string{"tools: unknown flag --jsn: did you mean --json? (see 'mcpbridge help tools')"}},
		{[]string{"tools", "--json=false"}, []string{"tools: flag --json takes no value"}},
		{[]string{"serve", "--stdio=no"}, []string{"serve: flag --stdio takes no value"}},
		{[]string{"tools", "--url", "http://x", "--config", bad}, []string{"cannot be used together"}},
		{[]string{"tools", "--url", "ftp://x"}, []string{"--url"}},
		{[]string{"tools", "--url", "http://127.0.0.1:1/mcp", "--header", "nocolon"}, []string{"want 'Name: value'"}},
		{[]string{}, []string{"Usage:"}},
	}
	for _, tc := range tests {
		r := mcpbridge(t, "", tc.args...)
		if r.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\nstderr: %s", tc.args, r.code, r.stderr)
		}
		for _, h := range tc.has {
			if !strings.Contains(r.stderr, h) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, h, r.stderr)
			}
		}
	}
	if r := mcpbridge(t, "", "help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
		t.Errorf("help: %+v", r)
	}
	// A command that starts servers starts none of these invalid entries,
	// reports each with file:line, and exits 1 (see TestInvalidEntryFailsAlone);
	// the entry of an unknown plugin is no server.
	r := mcpbridge(t, "", "tools", "--config", bad)
	for _, h := range []string{bad + ":7:", `entry "a"`, "toolCallTimeoutMs", bad + ":9:", "no-such-plugin", `SURELY_UNSET_VAR_123`, "0 tools from 0 of 2 servers"} {
		if r.code != ExitFailed || !strings.Contains(r.stderr, h) {
			t.Errorf("tools: exit %d, want 1; stderr lacks %q?\n%s", r.code, h, r.stderr)
		}
	}
}

// A broken server is reported with its reason while the others' tools are
// shown; the exit status says something failed.
func TestBrokenServerDoesNotHideOthers(t *testing.T) {
	cfg := writeConfig(t, `- id: demo
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
- id: off
  name: mcp-client
  disabled: true
  config:
    serverName: off
    transport: stdio
    command: whatever
`)
	r := mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1", r.code)
	}
	if !strings.Contains(r.stdout, "mcp__demo__echo") {
		t.Errorf("demo tools missing:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, `server "broken" failed:`) || !strings.Contains(r.stderr, "no-such-mcp-server-xyz") {
		t.Errorf("stderr: %s", r.stderr)
	}
}

// --url with --name and --header against a real Streamable HTTP server.
func TestURLSource(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	r := mcpbridge(t, "", "call", "--url", hs.URL, "--name", "web", "--header", "X-Probe: yes", "mcp__web__greet", `{"name":"web"}`)
	if r.code != 0 || r.stdout != "Hello, web!\n" {
		t.Fatalf("%+v", r)
	}
	for _, h := range hs.Headers() {
		if h.Get("X-Probe") != "yes" {
			t.Errorf("request without the header: %v", h)
		}
	}
	r = mcpbridge(t, "", "tools", "--url", hs.URL)
	if r.code != 0 || !strings.Contains(r.stdout, "mcp__remote__admin_reset_") {
		t.Errorf("tools --url: %+v", r)
	}
}
