package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/callargs"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A command, working directory or URL host from ${VAR} shows as written in
// status, status --json and /healthz; the expanded value never does.
func TestExpandedValuesNotShown(t *testing.T) {
	t.Setenv("STATUS_SECRET_CMD", "no-such-"+secret)
	t.Setenv("STATUS_SECRET_DIR", "/nonexistent/"+secret)
	t.Setenv("STATUS_SECRET_HOST", "127.0.0.1")
	inDir(t, `- id: cmd
  name: mcp-client
  config: {serverName: cmd, transport: stdio, command: "${STATUS_SECRET_CMD}"}
- id: dir
  name: mcp-client
  config: {serverName: dir, transport: stdio, command: sh, cwd: "${STATUS_SECRET_DIR}"}
- id: web
  name: mcp-client
  config: {serverName: web, transport: streamable-http, url: "http://${STATUS_SECRET_HOST}:1/mcp"}
`)
	leaks := func(what, text string) {
		t.Helper()
		for _, v := range []string{secret, "127.0.0.1"} {
			if strings.Contains(text, v) {
				t.Errorf("%s shows the expanded value %q:\n%s", what, v, text)
			}
		}
		for _, v := range []string{"${STATUS_SECRET_CMD}", "stat ${STATUS_SECRET_DIR}:", "dial tcp ${STATUS_SECRET_HOST}:1"} {
			if !strings.Contains(text, v) {
				t.Errorf("%s lacks %s:\n%s", what, v, text)
			}
		}
	}
	r := mcpbridge(t, "", "status")
	leaks("status", r.stdout+r.stderr)
	r = mcpbridge(t, "", "status", "--json")
	leaks("status --json", r.stdout+r.stderr)

	// /healthz is the gateway's rendering of backendStates.
	e := &env{IO: IO{LookupEnv: os.LookupEnv, Stdout: io.Discard, Stderr: io.Discard}}
	f := &flags{config: "mcpbridge.yaml", json: true}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.open(t.Context(), src, f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	health, _ := json.Marshal(gatewayrun.BackendStates(b.statuses))
	leaks("/healthz", string(health))
}

// hostileServer is an MCP server whose every text carries terminal escape
// sequences: a window title, a screen clear, a carriage return, and a
// newline in its version.
func hostileServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "evil\x1b]0;pwned\x07", Version: "1.0\nfake row\x1b[2J"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", Description: "desc\x1b[2J\rmore", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "line1\nline2\t\x1b]0;x\x07end\u009b"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad\x1b[31m\r"}}}, nil
		})
	hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{})
	return writeConfig(t, fmt.Sprintf("- id: evil\n  name: mcp-client\n  config: {serverName: evil, transport: streamable-http, url: %q}\n", hs.URL))
}

// Server-controlled text reaches the terminal escaped in human output, and
// unchanged (as JSON strings) in JSON output.
func TestTerminalEscapes(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := hostileServer(t)
	raw := func(what string, r run) {
		t.Helper()
		for _, c := range []string{"\x1b", "\r", "\u009b", "\x07"} {
			if strings.Contains(r.stdout+r.stderr, c) {
				t.Errorf("%s prints %q raw:\nstdout: %q\nstderr: %q", what, c, r.stdout, r.stderr)
			}
		}
	}

	r := mcpbridge(t, "", "status", "--config", cfg)
	raw("status", r)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `evil\x1b]0;pwned\x07 1.0\nfake row\x1b[2J`) {
		t.Errorf("status table: want the header and one row with the peer escaped, got %d lines:\n%s", len(lines), r.stdout)
	}

	r = mcpbridge(t, "", "tools", "--config", cfg)
	raw("tools", r)
	if !strings.Contains(r.stdout, `desc\x1b[2J\rmore`) {
		t.Errorf("tools: %q", r.stdout)
	}

	// call keeps the lines and tabs of a result.
	r = mcpbridge(t, "", "call", "--config", cfg, "mcp__evil__t", "{}")
	raw("call", r)
	if want := "line1\nline2\t\\x1b]0;x\\x07end\\u009b\n"; r.code != ExitOK || r.stdout != want {
		t.Errorf("call: exit %d, stdout %q, want %q", r.code, r.stdout, want)
	}
	r = mcpbridge(t, "", "call", "--config", cfg, "mcp__evil__fail", "{}")
	raw("call of a failing tool", r)
	if r.code != ExitFailed || !strings.Contains(r.stdout, `bad\x1b[31m\r`) {
		t.Errorf("failing call: exit %d, stdout %q", r.code, r.stdout)
	}

	// JSON output keeps the data: the escapes are JSON's.
	r = mcpbridge(t, "", "call", "--json", "--config", cfg, "mcp__evil__t", "{}")
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "line1\nline2\t\x1b]0;x\x07end\u009b" {
		t.Errorf("call --json: %v\n%s", err, r.stdout)
	}
	r = mcpbridge(t, "", "status", "--json", "--config", cfg)
	if !strings.Contains(r.stdout, `"version": "1.0\nfake row\u001b[2J"`) {
		t.Errorf("status --json: %s", r.stdout)
	}
}

// Errors of servers are shown escaped, each of their lines indented under
// the first, in the status table and in the failures tools and call report.
func TestTerminalEscapesInErrors(t *testing.T) {
	st := host.Status{ID: "x", Name: "x", Plugin: clientkind.Name, State: host.StateFailed, Err: "tools/list: boom\x1b]0;t\x07\nsecond line", Transport: "stdio"}
	var out bytes.Buffer
	writeStatusTable(&out, []host.Status{st}, nil, nil)
	want := "x: failed: tools/list: boom\\x1b]0;t\\x07\n  second line\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("status table:\n%q\nwant it to end with %q", out.String(), want)
	}
	var errOut bytes.Buffer
	e := &env{IO: IO{Stderr: &errOut}}
	e.reportFailures(&bridge{failed: []host.Status{st}})
	if got := errOut.String(); got != `mcpbridge: server "x" failed: `+strings.TrimPrefix(want, "x: failed: ") {
		t.Errorf("reportFailures: %q", got)
	}
}

// call refuses arguments that are not a JSON object, before any server
// starts (the config file does not even exist).
func TestCallArgsMustBeObject(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tt := range []struct{ args, kind string }{
		{"42", "a number"}, {"[1,2]", "an array"}, {"null", "null"}, {`"x"`, "a string"}, {" true ", "a boolean"},
	} {
		r := mcpbridge(t, "", "call", "--config", "missing.yaml", "mcp__demo__add", tt.args)
		want := "mcpbridge: call: arguments must be a JSON object, like '{\"a\": 1}' or '{}', got " + tt.kind + "\n"
		if r.code != ExitUsage || r.stderr != want {
			t.Errorf("call %s: exit %d, stderr %q, want 2 and %q", tt.args, r.code, r.stderr, want)
		}
		r = mcpbridge(t, tt.args, "call", "--config", "missing.yaml", "mcp__demo__add", "-")
		if r.code != ExitUsage || r.stderr != want {
			t.Errorf("call - <<< %s: exit %d, stderr %q", tt.args, r.code, r.stderr)
		}
	}
	// An object is fine.
	if r := mcpbridge(t, "", "call", "mcp__demo__add", ` {"a": 2, "b": 3} `); r.code != ExitOK || r.stdout != "5\n" {
		t.Errorf("an object: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// countingReader is "{" and then spaces, size bytes in all, counting what
// was read of it.
type countingReader struct{ n, size int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	if r.n >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.n)]
	for i := range p {
		p[i] = ' '
	}
	if r.n == 0 {
		p[0] = '{'
	}
	r.n += int64(len(p))
	return len(p), nil
}

// `call NAME -` reads at most 16 MiB (and a byte) of arguments from stdin,
// then refuses them.
func TestCallArgsSizeLimit(t *testing.T) {
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	in := &countingReader{size: 200 << 20} // the 200 MB argument
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	code := Main(ctx, IO{Args: []string{"call", "mcp__demo__add", "-"}, Stdin: in, Stdout: &stdout, Stderr: &stderr})
	if want := "mcpbridge: call: the arguments are larger than 16 MiB\n"; code != ExitUsage || stderr.String() != want {
		t.Errorf("exit %d, stderr %q, want 2 and %q", code, stderr.String(), want)
	}
	if limit := int64(callargs.MaxJSONBytes + 1); in.n < limit || in.n > limit+64<<10 {
		t.Errorf("read %d bytes of a 200 MiB stdin, want %d (and a buffer at most)", in.n, limit)
	}
	t.Logf("read %d bytes of a 200 MiB stdin", in.n)

	// Just under the limit is read whole.
	args := `{"a": 2, "b": 3}` + strings.Repeat(" ", callargs.MaxJSONBytes-16)
	if r := mcpbridge(t, args, "call", "mcp__demo__add", "-"); r.code != ExitOK || r.stdout != "5\n" {
		t.Errorf("16 MiB of arguments: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// A config file over 4 MiB is refused with a clear error.
func TestConfigFileSizeLimit(t *testing.T) {
	inDir(t, "[]\n"+strings.Repeat("# padding\n", host.MaxConfigBytes/10+1))
	r := mcpbridge(t, "", "validate")
	if want := "mcpbridge: invalid config:\nconfig file mcpbridge.yaml is larger than 4 MiB: a composition file is a short YAML list of entries\n"; r.code != ExitUsage || r.stderr != want {
		t.Errorf("exit %d, stderr %q, want 2 and %q", r.code, r.stderr, want)
	}
	inDir(t, "[]\n"+strings.Repeat("# padding\n", (host.MaxConfigBytes-3)/10))
	if r := mcpbridge(t, "", "validate"); r.code != ExitOK {
		t.Errorf("a file under the limit: exit %d\n%s", r.code, r.stderr)
	}
}

// yaml.v3 reports an unknown anchor and invalid UTF-8 without a position;
// validate shows them with line and column.
func TestValidatePositionlessYAMLErrors(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"unknown anchor", "- id: a\n  name: mcp-client\n  config: *common\n",
			"mcpbridge.yaml:3:11: invalid YAML: unknown anchor 'common' referenced"},
		{"invalid UTF-8", "- id: a\n  name: mcp-client\n  config: {serverName: a, transport: stdio, command: \"caf\xe9\"}\n",
			"mcpbridge.yaml:3:58: invalid YAML: invalid trailing UTF-8 octet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inDir(t, tt.src)
			r := mcpbridge(t, "", "validate")
			if want := "mcpbridge: invalid config:\n" + tt.want + "\n"; r.code != ExitUsage || r.stderr != want {
				t.Errorf("exit %d, stderr %q, want 2 and %q", r.code, r.stderr, want)
			}
		})
	}
}
