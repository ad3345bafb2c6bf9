package cli

import (
	"regexp"
	"strings"
	"testing"
)

// An entry with several config errors shows each on its own line in every
// command that reports it, the lines after the first indented under it.
func TestSeveralErrorsOfOneEntryOnTheirOwnLines(t *testing.T) {
	cfg := writeConfig(t, `- id: demo
  name: mcp-client
  config:
    transport: stdio
    comand: foo
`)
	for _, cmd := range []string{"tools", "status", "list"} {
		r := mcpbridge(t, "", cmd, "--config", cfg)
		out := r.stdout + r.stderr
		if strings.Contains(out, `\n`) {
			t.Errorf("%s shows a literal \\n:\n%s", cmd, out)
		}
		for _, want := range []string{
			"\n  " + cfg + `:4:5: entry "demo": config.command: is required with transport: stdio` + "\n",
			"\n  " + cfg + `:5:5: entry "demo": config.comand: unknown key "comand"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks the line %q:\n%s", cmd, want, out)
			}
		}
	}
}

// A failed entry's line names the entry that failed: by its id beside the
// serverName it shares with a working one, by its kind when it is not a
// server; and the summary counts every entry that failed.
func TestFailureLinesNameTheEntry(t *testing.T) {
	cfg := writeConfig(t, `- id: demo
  name: mcp-client
  config:
    serverName: mydemo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
- id: other
  name: mcp-client
  config:
    serverName: mydemo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
- id: gateway
  name: gateway
  config:
    bogus: 1
- id: nk
  name: nosuchkind
  config: {}
- id: nok
  config: {}
`)
	tools := mcpbridge(t, "", "tools", "--config", cfg)
	for _, want := range []string{
		`mcpbridge: entry "other" (server "mydemo") failed: `,
		`mcpbridge: gateway entry "gateway" failed: `,
		`mcpbridge: entry "nk" failed: `,
		`mcpbridge: entry "nok" failed: `,
		"3 tools from 1 of 2 servers; 3 other entries failed\n",
	} {
		if !strings.Contains(tools.stderr, want) {
			t.Errorf("tools: stderr lacks %q:\n%s", want, tools.stderr)
		}
	}
	if strings.Contains(tools.stderr, `server "mydemo" failed`) {
		t.Errorf("tools: the working mydemo reads as failed:\n%s", tools.stderr)
	}
	status := mcpbridge(t, "", "status", "--config", cfg)
	if !regexp.MustCompile(`1 of 2 servers ready in [0-9.]+ms; 3 other entries failed\n`).MatchString(status.stderr) {
		t.Errorf("status: stderr:\n%s", status.stderr)
	}
	if !regexp.MustCompile(`(?m)^other +mydemo +failed +- +- +- +0 +0 `).MatchString(status.stdout) {
		t.Errorf("status: the failed other shows mydemo's tokens:\n%s", status.stdout)
	}
}

// prompts, resources and skills end, as tools does, with a summary line on
// stderr, even when the servers offer none.
func TestListingsSayWhatTheyFound(t *testing.T) {
	t.Chdir(t.TempDir()) // the embedded default: a server with tools alone
	for cmd, want := range map[string]string{
		"tools":     "3 tools from 1 of 1 servers\n",
		"prompts":   "0 prompts from 1 of 1 servers\n",
		"resources": "0 resources and 0 resource templates from 1 of 1 servers\n",
		"skills":    "0 skills from 1 of 1 servers\n",
	} {
		r := mcpbridge(t, "", cmd)
		if r.code != ExitOK || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr does not end with %q:\n%s", cmd, r.code, want, r.stderr)
		}
	}
}

// A prompt argument given as a number is refused with its name and how to
// give it as the string MCP wants, not with Go's unmarshalling error.
func TestPromptArgumentNotAString(t *testing.T) {
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "prompt", "mcp__demo__forecast", `{"city":"Paris","days":3}`)
	want := `prompt: argument "days" must be a string (MCP prompt arguments are strings), got a number: write '{"days": "3"}' or --arg days=3`
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "Go value") {
		t.Errorf("exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
	}
}

// logs of a server the config lacks lists its servers as words, not as a
// Go slice.
func TestLogsNamesTheServersReadably(t *testing.T) {
	cfg := writeConfig(t, `- id: alpha
  name: mcp-client
  config: {serverName: alpha, transport: stdio, command: x}
- id: beta
  name: mcp-client
  config: {serverName: beta, transport: stdio, command: x}
`)
	r := mcpbridge(t, "", "logs", "--config", cfg, "nosuch")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `(its servers: alpha, beta)`) {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// A stdio server that prints a banner on stdout fails saying so, quoting
// the line, not with the JSON decoder's words alone.
func TestBannerOnStdoutNamed(t *testing.T) {
	cfg := writeConfig(t, `- id: echoer
  name: mcp-client
  config:
    serverName: echoer
    transport: stdio
    command: /bin/sh
    args: [-c, 'echo "hello from echoer"; exec "$0" demo-server', "${MCPBRIDGE_EXE}"]
`)
	r := mcpbridge(t, "", "tools", "--config", cfg)
	want := `the server wrote on stdout a line that is not JSON-RPC: "hello from echoer" (invalid character 'h' looking for beginning of value); stdout carries the protocol alone: make the server log to stderr`
	if r.code != ExitFailed || !strings.Contains(r.stderr, want) {
		t.Errorf("exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
	}
}

// A stdio server that exits at once reads as having exited before
// answering initialize, with its status and stderr, whether the bridge met
// the end of its stdout or the closed pipe of its stdin first.
func TestServerExitingAtOnceNamed(t *testing.T) {
	cfg := writeConfig(t, `- id: quick
  name: mcp-client
  config:
    serverName: quick
    transport: stdio
    command: /bin/sh
    args: [-c, 'echo "boom: missing API key" >&2; exit 3']
`)
	want := regexp.MustCompile(`mcpbridge: server "quick" failed: connection closed: calling "initialize": client is closing: the server exited before answering initialize \(child "/bin/sh" \(pid [0-9]+\): exit status 3\); stderr: boom: missing API key\n`)
	for range 10 {
		r := mcpbridge(t, "", "tools", "--config", cfg)
		if r.code != ExitFailed || !want.MatchString(r.stderr) {
			t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
		}
	}
}
