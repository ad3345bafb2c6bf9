package mcpclient_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// The -update flag rewrites golden files. It is looked up rather than owned,
// so other test files of this binary may define it too.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// secret is the value of $TOKEN in these tests; no error text may contain it.
const secret = "hunter2-s3cr3t"

func lookup(name string) (string, bool) {
	v, ok := map[string]string{
		"TOKEN":     secret,
		"HOST":      "mcp.example.test",
		"EMPTY":     "",
		"BAD_URL":   "ftp://" + secret + "@example.test/",
		"NOT_URL":   "http://" + secret + "%zz",
		"CRLF":      secret + "\r\nX-Injected: 1",
		"WORKDIR":   "/srv/work",
		"DASH_ARGS": "-y",
		"HOME":      "/home/ann",
		"TILDE":     "~/from-a-variable",
	}[name]
	return v, ok
}

// decodeYAML decodes src as the config node of an entry. It fails the test if
// any error text contains the expanded secret.
func decodeYAML(t *testing.T, src string) (mcpclient.Config, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("parsing test YAML: %v", err)
	}
	var n *yaml.Node
	if len(doc.Content) > 0 {
		n = doc.Content[0]
	}
	c, err := mcpclient.DecodeConfig(n, lookup)
	if err == nil {
		return c, ""
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error text contains the expanded secret:\n%v", err)
	}
	return c, err.Error()
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func policy(enabled bool, initial, max, attempts int) *mcpclient.ReconnectPolicy {
	return &mcpclient.ReconnectPolicy{Enabled: enabled, InitialDelay: ms(initial), MaxDelay: ms(max), MaxAttempts: attempts}
}

func TestDecodeConfigValid(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want mcpclient.Config
	}{
		{
			name: "upstream 4: serverName github-prod_1 kept",
			src:  "{serverName: github-prod_1, transport: stdio, command: echo}",
			want: mcpclient.Config{ServerName: "github-prod_1", Transport: mcpclient.TransportStdio, Command: "echo"},
		},
		{
			name: "stdio, every key, with expansion",
			src: `
serverName: fs
transport: stdio
command: ${NOPE:-npx}
args: ["${DASH_ARGS}", "@modelcontextprotocol/server-filesystem", "$$HOME", "${WORKDIR}"]
env:
  GITHUB_TOKEN: ${TOKEN}
  PLAIN: "8080"
  EMPTY: ${EMPTY}
cwd: ${WORKDIR}/sub
toolCallTimeoutMs: 1
startupTimeoutMs: 2147483647
failOnStartupError: true
protocolVersion: 2025-11-25
reconnect: {enabled: false, initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 7}
enabledTools: [read_file, list_directory]
disabledTools: []
`,
			want: mcpclient.Config{
				ServerName: "fs", Transport: mcpclient.TransportStdio, Command: "npx",
				Args:               []string{"-y", "@modelcontextprotocol/server-filesystem", "$HOME", "/srv/work"},
				Env:                map[string]string{"GITHUB_TOKEN": secret, "PLAIN": "8080", "EMPTY": ""},
				Cwd:                "/srv/work/sub",
				ToolCallTimeout:    ms(1),
				StartupTimeout:     ms(2147483647),
				FailOnStartupError: true,
				ProtocolVersion:    "2025-11-25",
				Reconnect:          policy(false, 1, 2, 7), // upstream 96
				EnabledTools:       []string{"read_file", "list_directory"},
				DisabledTools:      []string{},
				// As written, for messages: expanded values are never shown.
				Written: mcpclient.Written{Command: "${NOPE:-npx}", Cwd: "${WORKDIR}/sub"},
			},
		},
		{
			name: "streamable-http with headers",
			src: `
serverName: web
transport: streamable-http
url: https://${HOST}/mcp
headers:
  Authorization: Bearer ${TOKEN}
  X-Optional: ${NOPE:-}
toolCallTimeoutMs: 30000
disabledTools: [dangerous]
`,
			want: mcpclient.Config{
				ServerName: "web", Transport: mcpclient.TransportStreamableHTTP,
				URL:             "https://mcp.example.test/mcp",
				Headers:         map[string]string{"Authorization": "Bearer " + secret, "X-Optional": ""},
				ToolCallTimeout: ms(30000),
				DisabledTools:   []string{"dangerous"},
				Written:         mcpclient.Written{URL: "https://${HOST}/mcp", Credentials: []string{"TOKEN", "NOPE"}},
			},
		},
		{
			name: "http URL with port and query",
			src:  "{serverName: local, transport: streamable-http, url: 'http://127.0.0.1:8080/mcp?x=1'}",
			want: mcpclient.Config{ServerName: "local", Transport: mcpclient.TransportStreamableHTTP, URL: "http://127.0.0.1:8080/mcp?x=1"},
		},
		{
			name: "nulls mean defaults",
			src:  "{serverName: s, transport: stdio, command: c, args: ~, env: ~, reconnect: ~, toolCallTimeoutMs: ~, failOnStartupError: ~}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c"},
		},
		{
			name: "upstream 5: empty reconnect block is the defaults",
			src:  "{serverName: s, transport: stdio, command: c, reconnect: {}}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Reconnect: policy(true, 500, 30000, 10)},
		},
		{
			name: "upstream 5: partial reconnect merges with the defaults",
			src:  "{serverName: s, transport: stdio, command: c, reconnect: {initialDelayMs: 100}}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Reconnect: policy(true, 100, 30000, 10)},
		},
		{
			name: "reconnect null values keep defaults",
			src:  "{serverName: s, transport: stdio, command: c, reconnect: {enabled: ~, maxAttempts: 9007199254740991}}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Reconnect: policy(true, 500, 30000, 9007199254740991)},
		},
		{
			name: "client features: roots, sampling, log level, resource tools, always load",
			src:  "{serverName: s, transport: stdio, command: c, roots: [/data, ./here], allowSampling: true, logLevel: debug, resourceTools: false, alwaysLoad: true, share: session}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c",
				Roots: []string{"/data", "./here"}, AllowSampling: true, LogLevel: "debug", HideResources: true, AlwaysLoad: true, Share: "session"},
		},
		{
			name: "trusted",
			src:  "{serverName: s, transport: stdio, command: c, trusted: true}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Trusted: true},
		},
		{
			name: "no roots at all",
			src:  "{serverName: s, transport: stdio, command: c, roots: []}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Roots: []string{}},
		},
		{
			name: "roots absent offers none",
			src:  "{serverName: s, transport: stdio, command: c, roots: ~}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c"},
		},
		{
			name: "roots from the calling client",
			src:  "{serverName: s, transport: stdio, command: c, roots: client, pin: warn}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", RootsFromClient: true, Pin: "warn"},
		},
		{
			name: "initialDelayMs equal to maxDelayMs",
			src:  "{serverName: s, transport: stdio, command: c, reconnect: {initialDelayMs: 2147483647, maxDelayMs: 2147483647}}",
			want: mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c", Reconnect: policy(true, 2147483647, 2147483647, 10)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := decodeYAML(t, tt.src)
			if errs != "" {
				t.Fatalf("DecodeConfig failed:\n%s", errs)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeConfig (-want +got):\n%s", diff)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("a decoded config does not pass Validate:\n%v", err)
			}
		})
	}
}

func TestDecodeConfigErrors(t *testing.T) {
	const ok = "serverName: srv\ntransport: stdio\ncommand: echo\n" // lines 1-3
	tests := []struct {
		name string
		src  string
		want string
	}{
		// docs/upstream.md §8.1 cases 2, 3 and 6.
		{"upstream 2: serverName missing", "transport: stdio\ncommand: echo",
			`1:1: config.serverName: serverName is required`},
		{"upstream 3: bad name!", "serverName: bad name!\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName "bad name!" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"upstream 3: 33 x", "serverName: " + strings.Repeat("x", 33) + "\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName "` + strings.Repeat("x", 33) + `" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"upstream 6: maxAttempts 0", ok + "reconnect: {maxAttempts: 0}",
			`4:26: config.reconnect.maxAttempts: mcp-client(srv): reconnect.maxAttempts must be a positive integer (got the integer 0)`},

		// docs/upstream.md §8.3 policy resolution, cases 97-100.
		{"logLevel not a level", ok + "logLevel: verbose",
			`4:11: config.logLevel: must be one of debug, info, notice, warning, error, critical, alert, emergency, got "verbose"`},
		{"upstream 97: unknown reconnect key", ok + "reconnect:\n  jitterRatio: 0.5",
			`5:3: config.reconnect.jitterRatio: mcp-client(srv): reconnect.jitterRatio is not a reconnect option`},
		{"upstream 98: initialDelayMs 0", ok + "reconnect: {initialDelayMs: 0}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the integer 0)`},
		{"upstream 98: initialDelayMs infinity", ok + "reconnect: {initialDelayMs: .inf}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the number .inf)`},
		{"upstream 98: maxDelayMs -1", ok + "reconnect: {maxDelayMs: -1}",
			`4:25: config.reconnect.maxDelayMs: mcp-client(srv): reconnect.maxDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the integer -1)`},
		{"maxDelayMs too large", ok + "reconnect: {maxDelayMs: 2147483648}",
			`4:25: config.reconnect.maxDelayMs: mcp-client(srv): reconnect.maxDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the integer 2147483648)`},
		{"initialDelayMs fraction", ok + "reconnect: {initialDelayMs: 1.5}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the number 1.5)`},
		{"initialDelayMs string", ok + "reconnect: {initialDelayMs: '100'}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got a string)`},
		{"upstream 99: initialDelayMs > maxDelayMs", ok + "reconnect: {initialDelayMs: 100, maxDelayMs: 5}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be less than or equal to maxDelayMs`},
		{"cross-field against the default maxDelayMs", ok + "reconnect: {initialDelayMs: 30001}",
			`4:29: config.reconnect.initialDelayMs: mcp-client(srv): reconnect.initialDelayMs must be less than or equal to maxDelayMs`},
		{"no cross-field error on top of a bad value", ok + "reconnect: {initialDelayMs: 100, maxDelayMs: 0}",
			`4:46: config.reconnect.maxDelayMs: mcp-client(srv): reconnect.maxDelayMs must be a positive finite number no greater than 2147483647, in whole milliseconds (got the integer 0)`},
		{"upstream 100: maxAttempts 1.5", ok + "reconnect: {maxAttempts: 1.5}",
			`4:26: config.reconnect.maxAttempts: mcp-client(srv): reconnect.maxAttempts must be a positive integer (got the number 1.5)`},
		{"maxAttempts above 2^53-1", ok + "reconnect: {maxAttempts: 9007199254740992}",
			`4:26: config.reconnect.maxAttempts: mcp-client(srv): reconnect.maxAttempts must be a positive integer (got the integer 9007199254740992)`},
		{"alwaysLoad not a bool", ok + "alwaysLoad: [github]",
			`4:13: config.alwaysLoad: must be true or false, got a list`},
		{"reconnect enabled not a bool", ok + "reconnect: {enabled: yes}",
			`4:22: config.reconnect.enabled: must be true or false, got a string`},
		{"reconnect not a mapping", ok + "reconnect: true",
			`4:12: config.reconnect: must be a mapping of keys to values, got the boolean true`},
		{"reconnect prefix when serverName is bad", "serverName: [7]\ntransport: stdio\ncommand: echo\nreconnect: {x: 1}",
			"1:13: config.serverName: must be a string, got a list\n" +
				"4:13: config.reconnect.x: mcp-client(): reconnect.x is not a reconnect option"},

		// serverName, beyond upstream.
		{"serverName with __", "serverName: a__b\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName "a__b" must not contain "__": public tool names join serverName and tool name with "__", so it would be ambiguous`},
		{"serverName starting with _", "serverName: _a\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName "_a" must not start or end with "_": public tool names join serverName and tool name with "__", so it would be ambiguous`},
		{"serverName empty", "serverName: ''\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName is required`},
		{"serverName not expanded", "serverName: ${HOST}\ntransport: stdio\ncommand: echo",
			`1:13: config.serverName: serverName "${HOST}" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},

		// transport.
		{"transport missing", "serverName: srv\ncommand: echo",
			`1:1: config.transport: is required: "stdio", "streamable-http" or "sse"`},
		{"transport unknown", "serverName: srv\ntransport: websocket\nurl: http://x",
			`2:12: config.transport: must be "stdio", "streamable-http" or "sse", got "websocket"`},
		{"transport not a string", "serverName: srv\ntransport: [stdio]\ncommand: echo",
			`2:12: config.transport: must be a string, got a list`},
		{"command missing", "serverName: srv\ntransport: stdio",
			`1:1: config.command: is required with transport: stdio`},
		{"command expands to empty", "serverName: srv\ntransport: stdio\ncommand: ${EMPTY}",
			`3:10: config.command: is required with transport: stdio`},
		{"http keys with stdio", ok + "url: http://x\nheaders: {A: b}",
			"4:6: config.url: url is only valid with transport: streamable-http\n" +
				"5:10: config.headers: headers is only valid with transport: streamable-http"},
		{"stdio keys with http, even empty", "serverName: srv\ntransport: streamable-http\nurl: http://x\ncommand: echo\nargs: []\nenv: {}\ncwd: ''",
			"4:10: config.command: command is only valid with transport: stdio\n" +
				"5:7: config.args: args is only valid with transport: stdio\n" +
				"6:6: config.env: env is only valid with transport: stdio\n" +
				"7:6: config.cwd: cwd is only valid with transport: stdio"},
		{"url missing", "serverName: srv\ntransport: streamable-http",
			`1:1: config.url: is required with transport: streamable-http`},
		{"url not http", "serverName: srv\ntransport: streamable-http\nurl: ftp://example.test/",
			`3:6: config.url: must be an absolute http:// or https:// URL (the scheme is not http or https)`},
		{"url relative", "serverName: srv\ntransport: streamable-http\nurl: /mcp",
			`3:6: config.url: must be an absolute http:// or https:// URL (it has no scheme: start it with http:// or https://)`},
		{"url without host", "serverName: srv\ntransport: streamable-http\nurl: 'http:///mcp'",
			`3:6: config.url: must be an absolute http:// or https:// URL (it has no host)`},
		{"url from a secret that is not http", "serverName: srv\ntransport: streamable-http\nurl: ${BAD_URL}",
			`3:6: config.url: must be an absolute http:// or https:// URL (the scheme is not http or https)`},
		{"url from a secret that does not parse", "serverName: srv\ntransport: streamable-http\nurl: ${NOT_URL}",
			`3:6: config.url: must be an absolute http:// or https:// URL (it does not parse as a URL)`},

		// Timeouts.
		{"toolCallTimeoutMs 0", ok + "toolCallTimeoutMs: 0",
			`4:20: config.toolCallTimeoutMs: must be between 1 and 2147483647, got 0`},
		{"toolCallTimeoutMs too large", ok + "toolCallTimeoutMs: 2147483648",
			`4:20: config.toolCallTimeoutMs: must be between 1 and 2147483647, got 2147483648`},
		{"toolCallTimeoutMs fraction", ok + "toolCallTimeoutMs: 1.5",
			`4:20: config.toolCallTimeoutMs: must be an integer, got the number 1.5`},
		{"toolCallTimeoutMs string", ok + "toolCallTimeoutMs: '10'",
			`4:20: config.toolCallTimeoutMs: must be an integer, got a string (remove the quotes)`},
		{"startupTimeoutMs negative", ok + "startupTimeoutMs: -5",
			`4:19: config.startupTimeoutMs: must be between 1 and 2147483647, got -5`},
		{"failOnStartupError not a bool", ok + "failOnStartupError: 'true'",
			`4:21: config.failOnStartupError: must be true or false, got a string`},

		// protocolVersion and tool lists.
		{"protocolVersion unknown", ok + "protocolVersion: 2025-01-01",
			`4:18: config.protocolVersion: "2025-01-01" is not a supported MCP protocol version (use one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28, or leave it empty to negotiate)`},
		{"enabledTools and disabledTools", ok + "enabledTools: [a]\ndisabledTools: [b]",
			`5:16: config.disabledTools: enabledTools and disabledTools may not both be set: list either the tools to keep or the tools to hide`},
		{"empty tool name", ok + "enabledTools: [a, '']",
			`4:19: config.enabledTools[1]: tool names must not be empty`},
		{"tool name not a string", ok + "disabledTools: [1]",
			`4:17: config.disabledTools[0]: must be a string, got the integer 1 (quote it: "1")`},

		// roots: a list of paths or client, nothing else.
		{"roots a number", ok + "roots: 5",
			`4:8: config.roots: must be a list of paths or "client", got the integer 5`},
		{"roots another word", ok + "roots: cwd",
			`4:8: config.roots: must be a list of paths or "client", got a string`},
		{"roots a mapping", ok + "roots: {read: /}",
			`4:8: config.roots: must be a list of paths or "client", got a mapping`},
		{"roots a quoted client in a list", ok + "roots: [client, 1]",
			`4:17: config.roots[1]: must be a string, got the integer 1 (quote it: "1")`},
		{"roots an empty path", ok + "roots: ['']",
			`4:9: config.roots[0]: root paths must not be empty (write "." for the working directory)`},

		{"pin unknown", ok + "pin: sometimes",
			`4:6: config.pin: must be one of hold, warn, off, got "sometimes"`},
		{"pin a boolean is told what pin takes", ok + "pin: false",
			`4:6: config.pin: must be one of hold, warn, off, got "false"`},

		// env, args, headers and expansion.
		{"env number value", ok + "env: {PORT: 8080}",
			`4:13: config.env.PORT: must be a string, got the integer 8080 (quote it: "8080")`},
		{"env bad name", ok + "env: {'A=B': x}",
			`4:14: config.env["A=B"]: environment variable names must be non-empty and contain no "=" or NUL`},
		{"env NUL value", ok + "env: {A: \"x\\0y\"}",
			`4:10: config.env.A: value must not contain NUL characters`},
		{"env list", ok + "env: [A=b]",
			`4:6: config.env: must be a mapping of strings to strings, got a list`},
		{"args not a list", ok + "args: -y",
			`4:7: config.args: must be a list of strings, got a string`},
		{"unset variable in args", ok + "args: [a, '${GITHUB_TOKEN}']",
			`4:11: config.args[1]: environment variable "GITHUB_TOKEN" is not set (use ${GITHUB_TOKEN:-default} for a fallback)`},
		{"unclosed reference in cwd", ok + "cwd: ${WORKDIR",
			`4:6: config.cwd: unclosed "${": add the closing "}", or write "$$" for a literal "$"`},
		{"unset variable in command", "serverName: srv\ntransport: stdio\ncommand: ${MISSING_CMD}",
			`3:10: config.command: environment variable "MISSING_CMD" is not set (use ${MISSING_CMD:-default} for a fallback)`},
		{"header with CRLF from a secret", "serverName: srv\ntransport: streamable-http\nurl: http://x\nheaders:\n  Authorization: ${CRLF}",
			`5:18: config.headers.Authorization: value must not contain CR, LF or NUL characters`},
		{"bad header name", "serverName: srv\ntransport: streamable-http\nurl: http://x\nheaders: {'Bad Header': x}",
			`4:25: config.headers["Bad Header"]: is not a valid HTTP header name`},
		{"header unset variable", "serverName: srv\ntransport: streamable-http\nurl: http://x\nheaders: {Authorization: 'Bearer ${API_TOKEN}'}",
			`4:26: config.headers.Authorization: environment variable "API_TOKEN" is not set (use ${API_TOKEN:-default} for a fallback)`},

		// Structure.
		{"unknown key with suggestion", ok + "toolCallTimeout: 10",
			`4:1: config.toolCallTimeout: unknown key "toolCallTimeout" (did you mean "toolCallTimeoutMs"?)`},
		{"duplicate key", ok + "command: cat",
			`4:1: config.command: duplicate key "command" (first defined at line 3)`},
		{"config not a mapping", "[serverName]",
			`1:1: config: must be a mapping of keys to values, got a list`},
		{"config missing", "",
			`config: is required: a mapping with at least serverName and transport`},
		{"every problem at once, in file order",
			"serverName: a__b\ntransport: stdio\nargs: [1]\nenv: {PORT: 8080}\ntoolCallTimeoutMs: 0\nreconnect: {maxAttempts: 0, jitter: 1}\nbogus: 1",
			"1:1: config.command: is required with transport: stdio\n" +
				`1:13: config.serverName: serverName "a__b" must not contain "__": public tool names join serverName and tool name with "__", so it would be ambiguous` + "\n" +
				"3:8: config.args[0]: must be a string, got the integer 1 (quote it: \"1\")\n" +
				"4:13: config.env.PORT: must be a string, got the integer 8080 (quote it: \"8080\")\n" +
				"5:20: config.toolCallTimeoutMs: must be between 1 and 2147483647, got 0\n" +
				"6:26: config.reconnect.maxAttempts: mcp-client(a__b): reconnect.maxAttempts must be a positive integer (got the integer 0)\n" +
				"6:29: config.reconnect.jitter: mcp-client(a__b): reconnect.jitter is not a reconnect option\n" +
				"7:1: config.bogus: unknown key \"bogus\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := decodeYAML(t, tt.src)
			if diff := cmp.Diff(tt.want, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(mcpclient.Config{}, got); diff != "" {
				t.Errorf("a failed decode must return the zero Config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconnectDefaults(t *testing.T) {
	// Upstream 95: omitted → exactly the defaults, and no caller can change
	// them for anyone else.
	want := mcpclient.ReconnectPolicy{Enabled: true, InitialDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second, MaxAttempts: 10}
	if diff := cmp.Diff(want, mcpclient.DefaultReconnectPolicy()); diff != "" {
		t.Errorf("DefaultReconnectPolicy (-want +got):\n%s", diff)
	}
	c, errs := decodeYAML(t, "{serverName: s, transport: stdio, command: c}")
	if errs != "" {
		t.Fatal(errs)
	}
	if c.Reconnect != nil {
		t.Errorf("an omitted reconnect block decoded to %+v, want nil (defaults)", *c.Reconnect)
	}
	resolved := c.WithDefaults()
	if diff := cmp.Diff(&want, resolved.Reconnect); diff != "" {
		t.Errorf("WithDefaults().Reconnect (-want +got):\n%s", diff)
	}
	resolved.Reconnect.MaxAttempts = 99
	if got := c.WithDefaults().Reconnect.MaxAttempts; got != 10 {
		t.Errorf("changing one resolved policy changed the next one: MaxAttempts = %d", got)
	}
	if got := mcpclient.DefaultReconnectPolicy().MaxAttempts; got != 10 {
		t.Errorf("changing a resolved policy changed the defaults: MaxAttempts = %d", got)
	}
}

func TestWithDefaults(t *testing.T) {
	p := policy(false, 1, 2, 3)
	in := mcpclient.Config{
		ServerName: "s", Transport: mcpclient.TransportStdio, Command: "c",
		Args: []string{"a"}, Env: map[string]string{"K": "v"}, Headers: map[string]string{"H": "v"},
		EnabledTools: []string{"t"}, DisabledTools: []string{"u"}, Roots: []string{"r"},
		Reconnect: p,
	}
	got := in.WithDefaults()
	want := in
	want.ToolCallTimeout = mcpclient.DefaultToolCallTimeout
	want.StartupTimeout = mcpclient.DefaultStartupTimeout
	want.LogLevel = mcpclient.DefaultLogLevel
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WithDefaults (-want +got):\n%s", diff)
	}
	got.Args[0], got.Env["K"], got.Headers["H"], got.EnabledTools[0], got.DisabledTools[0], got.Roots[0] = "x", "x", "x", "x", "x", "x"
	got.Reconnect.MaxAttempts = 42
	if in.Args[0] != "a" || in.Env["K"] != "v" || in.Headers["H"] != "v" || in.EnabledTools[0] != "t" || in.DisabledTools[0] != "u" || in.Roots[0] != "r" || p.MaxAttempts != 3 {
		t.Errorf("WithDefaults shares mutable state with the original: %+v, reconnect %+v", in, *p)
	}

	explicit := mcpclient.Config{ToolCallTimeout: time.Second, StartupTimeout: 2 * time.Second}.WithDefaults()
	if explicit.ToolCallTimeout != time.Second || explicit.StartupTimeout != 2*time.Second {
		t.Errorf("WithDefaults replaced explicit timeouts: %v, %v", explicit.ToolCallTimeout, explicit.StartupTimeout)
	}
}

func TestValidate(t *testing.T) {
	stdio := func(edit func(*mcpclient.Config)) mcpclient.Config {
		c := mcpclient.Config{ServerName: "srv", Transport: mcpclient.TransportStdio, Command: "echo"}
		edit(&c)
		return c
	}
	http := func(edit func(*mcpclient.Config)) mcpclient.Config {
		c := mcpclient.Config{ServerName: "web", Transport: mcpclient.TransportStreamableHTTP, URL: "https://example.test/mcp"}
		edit(&c)
		return c
	}
	tests := []struct {
		name string
		c    mcpclient.Config
		want string
	}{
		{"valid stdio", stdio(func(*mcpclient.Config) {}), ""},
		{"valid http", http(func(c *mcpclient.Config) { c.Headers = map[string]string{"Authorization": "Bearer x"} }), ""},
		{"valid everything", stdio(func(c *mcpclient.Config) {
			c.ToolCallTimeout, c.StartupTimeout = time.Millisecond, 2147483647*time.Millisecond
			c.ProtocolVersion = "2026-07-28"
			c.Reconnect = policy(true, 5, 40, 5)
			c.EnabledTools = []string{"a"}
		}), ""},
		{"zero Config", mcpclient.Config{},
			"serverName: serverName is required\n" +
				`transport: is required: "stdio", "streamable-http" or "sse"`},
		{"upstream 101: (100, 5) rejects with the cross-field message", stdio(func(c *mcpclient.Config) { c.Reconnect = policy(true, 100, 5, 10) }),
			"mcp-client(srv): reconnect.initialDelayMs must be less than or equal to maxDelayMs"},
		{"zero policy", stdio(func(c *mcpclient.Config) { c.Reconnect = &mcpclient.ReconnectPolicy{} }),
			"mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647\n" +
				"mcp-client(srv): reconnect.maxDelayMs must be a positive finite number no greater than 2147483647\n" +
				"mcp-client(srv): reconnect.maxAttempts must be a positive integer"},
		{"delays too long", stdio(func(c *mcpclient.Config) {
			c.Reconnect = &mcpclient.ReconnectPolicy{InitialDelay: 2147483648 * time.Millisecond, MaxDelay: -1, MaxAttempts: 1 << 53}
		}),
			"mcp-client(srv): reconnect.initialDelayMs must be a positive finite number no greater than 2147483647\n" +
				"mcp-client(srv): reconnect.maxDelayMs must be a positive finite number no greater than 2147483647\n" +
				"mcp-client(srv): reconnect.maxAttempts must be a positive integer"},
		{"bad transport", stdio(func(c *mcpclient.Config) { c.Transport = "STDIO" }),
			`transport: must be "stdio", "streamable-http" or "sse", got "STDIO"`},
		{"stdio without command, with http fields", stdio(func(c *mcpclient.Config) {
			c.Command, c.URL, c.Headers = "", "http://x", map[string]string{"A": "b"}
		}),
			"command: is required with transport: stdio\n" +
				"url: url is only valid with transport: streamable-http\n" +
				"headers: headers is only valid with transport: streamable-http"},
		{"http with stdio fields", http(func(c *mcpclient.Config) {
			c.Command, c.Args, c.Env, c.Cwd = "x", []string{"y"}, map[string]string{"A": "b"}, "/"
		}),
			"command: command is only valid with transport: stdio\n" +
				"args: args is only valid with transport: stdio\n" +
				"env: env is only valid with transport: stdio\n" +
				"cwd: cwd is only valid with transport: stdio"},
		{"http without url", http(func(c *mcpclient.Config) { c.URL = "" }),
			"url: is required with transport: streamable-http"},
		{"http url with a space", http(func(c *mcpclient.Config) { c.URL = "http://a b/" }),
			"url: must be an absolute http:// or https:// URL (it does not parse as a URL)"},
		{"env names and values", stdio(func(c *mcpclient.Config) {
			c.Env = map[string]string{"": "x", "A=B": "x", "OK": "x", "NUL": "a\x00b"}
		}),
			`env[""]: environment variable names must be non-empty and contain no "=" or NUL` + "\n" +
				`env["A=B"]: environment variable names must be non-empty and contain no "=" or NUL` + "\n" +
				"env.NUL: value must not contain NUL characters"},
		{"header names and values", http(func(c *mcpclient.Config) {
			c.Headers = map[string]string{"": "x", "Bad:Name": "x", "X-Ok": "ok", "X-Lf": "a\nb"}
		}),
			`headers[""]: is not a valid HTTP header name` + "\n" +
				`headers["Bad:Name"]: is not a valid HTTP header name` + "\n" +
				"headers.X-Lf: value must not contain CR, LF or NUL characters"},
		{"timeouts", stdio(func(c *mcpclient.Config) {
			c.ToolCallTimeout, c.StartupTimeout = -time.Second, 2147483648*time.Millisecond
		}),
			"toolCallTimeoutMs: must be between 1 and 2147483647 milliseconds (0 means the default)\n" +
				"startupTimeoutMs: must be between 1 and 2147483647 milliseconds (0 means the default)"},
		{"sub-millisecond timeout", stdio(func(c *mcpclient.Config) { c.ToolCallTimeout = time.Microsecond }),
			"toolCallTimeoutMs: must be between 1 and 2147483647 milliseconds (0 means the default)"},
		{"share", stdio(func(c *mcpclient.Config) { c.Share = "client" }),
			`share: must be "session" (one instance of the server per gateway client session) or absent, got "client"`},
		{"protocol version", stdio(func(c *mcpclient.Config) { c.ProtocolVersion = "latest" }),
			`protocolVersion: "latest" is not a supported MCP protocol version (use one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28, or leave it empty to negotiate)`},
		{"roots both ways", stdio(func(c *mcpclient.Config) { c.Roots, c.RootsFromClient = []string{"/data"}, true }),
			`roots: roots is either a list of paths or "client", not both`},
		{"tool lists", stdio(func(c *mcpclient.Config) {
			c.EnabledTools, c.DisabledTools = []string{"a", ""}, []string{""}
		}),
			"disabledTools: enabledTools and disabledTools may not both be set: list either the tools to keep or the tools to hide\n" +
				"enabledTools[1]: tool names must not be empty\n" +
				"disabledTools[0]: tool names must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidServerName(t *testing.T) {
	const why = `public tool names join serverName and tool name with "__", so it would be ambiguous`
	tests := []struct{ name, want string }{
		{"github-prod_1", ""},
		{"a", ""},
		{"A-b_c-1", ""},
		{strings.Repeat("x", 32), ""},
		{"", "serverName is required"},
		{strings.Repeat("x", 33), `serverName "` + strings.Repeat("x", 33) + `" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"bad name!", `serverName "bad name!" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"café", `serverName "café" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"a.b", `serverName "a.b" must be 1 to 32 characters, each a letter, a digit, "_" or "-"`},
		{"a__b", `serverName "a__b" must not contain "__": ` + why},
		{"_a", `serverName "_a" must not start or end with "_": ` + why},
		{"a_", `serverName "a_" must not start or end with "_": ` + why},
		{"_", `serverName "_" must not start or end with "_": ` + why},
	}
	for _, tt := range tests {
		if got := mcpclient.ValidServerName(tt.name); got != tt.want {
			t.Errorf("ValidServerName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// decodeFile runs a composition file through the same steps as the CLI:
// parse the entries, decode every enabled mcp-client entry, and put file and
// entry in front of every problem.
func decodeFile(filename string, data []byte, lookup func(string) (string, bool)) ([]mcpclient.Config, error) {
	entries, err := host.ParseEntries(filename, data)
	if err != nil {
		return nil, err
	}
	var cfgs []mcpclient.Config
	var errs []error
	for _, e := range entries {
		if e.Disabled {
			continue
		}
		if e.Name != clientkind.Name {
			errs = append(errs, host.EntryError(filename, e, "name", fmt.Sprintf("unknown plugin %q", e.Name)))
			continue
		}
		c, err := mcpclient.DecodeConfig(e.Config, lookup)
		if err != nil {
			errs = append(errs, host.FormatErrors(filename, e, err))
			continue
		}
		cfgs = append(cfgs, c)
	}
	return cfgs, errors.Join(errs...)
}

// TestConfigGolden checks whole files end to end, as a user sees them: every
// problem with file, line, column, entry and path. Run with -update to
// rewrite the .golden files after an intended change.
func TestConfigGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "config", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs under testdata/config: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfgs, err := decodeFile(filepath.Base(file), data, lookup)
			var got string
			if err != nil {
				got = "error:\n" + err.Error() + "\n"
				if strings.Contains(got, secret) {
					t.Errorf("error text contains the expanded secret:\n%s", got)
				}
			} else {
				out, err := json.MarshalIndent(cfgs, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = "ok:\n" + string(out) + "\n"
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if updateGolden() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestConfigGolden -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

// TestConfigExamples proves every shipped example parses and decodes, with
// no environment variable set.
func TestConfigExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfgs, err := decodeFile(file, data, nil)
			if err != nil {
				t.Fatalf("example does not decode:\n%v", err)
			}
			if len(cfgs) == 0 {
				t.Fatal("example has no enabled mcp-client entry")
			}
			for _, c := range cfgs {
				if err := c.Validate(); err != nil {
					t.Errorf("decoded example fails Validate:\n%v", err)
				}
			}
		})
	}
}

func ExampleDecodeConfig() {
	src := `
serverName: github
transport: streamable-http
url: https://api.githubcopilot.com/mcp/
headers:
  Authorization: Bearer ${GITHUB_TOKEN}
reconnect:
  maxAttempts: 3
`
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		panic(err)
	}
	env := func(name string) (string, bool) {
		if name == "GITHUB_TOKEN" {
			return "ghp_example", true
		}
		return "", false
	}
	cfg, err := mcpclient.DecodeConfig(doc.Content[0], env)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg = cfg.WithDefaults()
	fmt.Println(cfg.ServerName, cfg.Transport, cfg.URL)
	fmt.Println(cfg.Reconnect.MaxAttempts, cfg.Reconnect.InitialDelay, cfg.ToolCallTimeout)

	// Without GITHUB_TOKEN, the error names the variable, line and field.
	_, err = mcpclient.DecodeConfig(doc.Content[0], nil)
	fmt.Println(err)
	// Output:
	// github streamable-http https://api.githubcopilot.com/mcp/
	// 3 500ms 1m0s
	// 6:18: config.headers.Authorization: environment variable "GITHUB_TOKEN" is not set (use ${GITHUB_TOKEN:-default} for a fallback)
}
