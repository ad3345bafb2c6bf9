package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A task-required tool of server-everything (execution.taskSupport
// "required") is called as a task: created, polled at the server's
// interval, its result fetched; the report is what the call prints.
func TestCallTaskRequired(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__everything__simulate-research-query", `{"topic":"tides"}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "# Research Report: tides") || !strings.Contains(r.stdout, "Stage 4: Generating report ✓") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// An ambiguous query makes the task input_required: the server's question
// arrives during tasks/result and reaches --elicit, whose answer the
// report names.
func TestCallTaskAsks(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	cases := []struct{ elicit, want string }{
		{"decline", "User declined - using default interpretation"},
		{"cancel", "User cancelled - using default interpretation"},
	}
	sideBySide(len(cases), len(cases), func(i int) {
		c := cases[i]
		r := mcpbridge(t, "", "call", "--config", cfg, "--elicit", c.elicit, "mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`)
		if r.code != ExitOK || !strings.Contains(r.stdout, "**Clarification**: "+c.want) {
			t.Errorf("--elicit %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.elicit, r.code, r.stdout, r.stderr)
		}
	})
}

// On a terminal, the task's status shows as progress does, on one line
// erased at the end.
func TestCallTaskStatusOnTerminal(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	var stdout, stderr lockedBuffer
	args := []string{"call", "--config", cfg, "mcp__everything__simulate-research-query", `{"topic":"tides"}`}
	code := Main(context.Background(), IO{Args: args, Stdout: &stdout, Stderr: &stderr, StderrIsTerminal: true})
	if code != ExitOK || !strings.Contains(stdout.String(), "# Research Report: tides") {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	// Which stages a poll sees depends on timing; that one is shown does not.
	if want := "\r\x1b[Kmcp__everything__simulate-research-query task working: "; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
	if !strings.HasSuffix(stderr.String(), "\r\x1b[K") {
		t.Errorf("the status line is not erased: %q", stderr.String())
	}
}

// server-everything's trigger-elicitation-request-async asks for its
// elicitation to run as a task on the client: the bridge answers with a
// task, asks --elicit meanwhile, and answers the server's tasks/get and
// tasks/result (a client without tasks would not be offered the tool).
func TestCallServedElicitationTask(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "call", "--config", cfg, "--elicit", "decline", "mcp__everything__trigger-elicitation-request-async", `{}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "[DECLINED] User declined to provide the requested information.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// The TypeScript SDK client through `serve --stdio` calls the task tool
// as a plain tool: the gateway runs it as a task on the backend and
// answers with the report.
func TestServeTaskNodeClient(t *testing.T) {
	t.Parallel()
	out, stderr := runNodeScript(t, "node_first_list.mjs", append([]string{"mcp__everything__simulate-research-query", `{"topic":"tides"}`}, serveStdioLine(t, everythingConfig(t))...)...)
	if !strings.Contains(string(out), "# Research Report: tides") || strings.Contains(string(out), `"isError":true`) {
		t.Errorf("node client printed %s\n%s", out, stderr)
	}
}

// Through `serve`, a task waiting for input asks the gateway's client:
// the TypeScript SDK client answers the research tool's question, and
// the report carries its answer.
func TestServeTaskAsksNodeClient(t *testing.T) {
	t.Parallel()
	out, stderr := runNodeScript(t, "node_task_elicit.mjs", append([]string{"mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`,
		`{"action":"accept","content":{"interpretation":"snake"}}`}, serveStdioLine(t, everythingConfig(t))...)...)
	if !strings.Contains(string(out), `could have multiple interpretations`) || !strings.Contains(string(out), "**Clarification**: snake") {
		t.Errorf("node client printed %s\n%s", out, stderr)
	}
}

// A go-sdk client on protocol 2026-07-28 (serve --http --stateless) gets
// the task tool's report as a plain result.
func TestServeStatelessTask(t *testing.T) {
	t.Parallel()
	p := startServing(t, nil, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", everythingConfig(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28", v)
	}
	waitTools(t, cs, "mcp__everything__simulate-research-query")
	if got, isErr := callText(t, cs, "mcp__everything__simulate-research-query", `{"topic":"tides"}`); isErr || !strings.Contains(got, "# Research Report: tides") {
		t.Errorf("call: %q (isError %v)", got, isErr)
	}
}

// Over Streamable HTTP the task's requests go out as POSTs of their own
// (tasks/get, tasks/result): server-everything's HTTP mode answers them.
func TestCallTaskHTTP(t *testing.T) {
	t.Parallel()
	base := startEverything(t, "streamableHttp")
	r := mcpbridge(t, "", "call", "--url", base+"/mcp", "--name", "everything", "--elicit", "decline",
		"mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "**Clarification**: User declined - using default interpretation") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// The TypeScript SDK client through `serve --stdio` calls the research
// tool with its tasks API, which makes the call a task since the gateway
// declares tasks and lists the tool as supporting them: the gateway
// creates the task, the client polls it, the question of the ambiguous query reaches
// the client naming the task, and tasks/result brings the report with
// the client's answer.
func TestServeTaskAsTaskNodeClient(t *testing.T) {
	t.Parallel()
	out, stderr := runNodeScript(t, "node_task_stream.mjs", append([]string{"mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`,
		`{"action":"accept","content":{"interpretation":"snake"}}`}, serveStdioLine(t, everythingConfig(t))...)...)
	var got struct {
		TaskID string `json:"taskId"`
		Asked  []struct {
			Message string `json:"message"`
			Meta    struct {
				Related struct {
					TaskID string `json:"taskId"`
				} `json:"io.modelcontextprotocol/related-task"`
			} `json:"_meta"`
		} `json:"asked"`
		Statuses []string        `json:"statuses"`
		Result   json.RawMessage `json:"result"`
		Error    string          `json:"error"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client printed %s: %v\n%s", out, err, stderr)
	}
	if got.TaskID == "" || got.Error != "" || !strings.Contains(string(got.Result), "**Clarification**: snake") {
		t.Fatalf("node client printed %s\n%s", out, stderr)
	}
	if len(got.Asked) != 1 || got.Asked[0].Meta.Related.TaskID != got.TaskID || !strings.Contains(got.Asked[0].Message, "multiple interpretations") {
		t.Errorf("questions %+v (task %s)", got.Asked, got.TaskID)
	}
	if len(got.Statuses) == 0 || got.Statuses[0] != "working" {
		t.Errorf("statuses %v", got.Statuses)
	}
}

// The bridge's own client through `serve --http --stateless` (protocol
// 2026-07-28, the tasks extension): the gateway makes the research call a
// task of its own, the backend's question during it reaches the calling
// client as an inputRequest, --elicit answers it (tasks/update), and the
// report names the answer.
func TestServeStatelessExtensionTaskAsks(t *testing.T) {
	t.Parallel()
	p := startServing(t, nil, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", everythingConfig(t))
	r := mcpbridge(t, "", "call", "--url", p.url, "--name", "gw", "--elicit", "decline",
		"mcp__gw__mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "**Clarification**: User declined - using default interpretation") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// The bridge's own client through `serve --stdio` (protocol 2026-07-28,
// opened with server/discover): the research call becomes a task of the
// gateway's under the tasks extension, its question reaches --elicit as
// an inputRequest, and the report names the answer.
func TestServeStdioExtensionTaskAsks(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`- id: gw
  name: mcp-client
  config:
    serverName: gw
    transport: stdio
    command: %s
    args: [serve, --stdio, --config, %s]
    env: {%s: "1"}
    toolCallTimeoutMs: 30000
`, exe, everythingConfig(t), mainEnv))
	r := mcpbridge(t, "", "call", "--config", cfg, "--elicit", "cancel",
		"mcp__gw__mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "**Clarification**: User cancelled - using default interpretation") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
