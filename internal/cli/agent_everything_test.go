package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// everythingAgentConfig is server-everything (sampling allowed) and
// server-filesystem over dir.
func everythingAgentConfig(t *testing.T, dir string) string {
	everything := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	fs := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	return writeConfig(t, fmt.Sprintf(`- id: everything
  name: mcp-client
  config:
    serverName: everything
    transport: stdio
    command: %s
    args: [stdio]
    allowSampling: true
    toolCallTimeoutMs: 30000
- id: fs
  name: mcp-client
  config:
    serverName: filesystem
    transport: stdio
    command: %s
    args: [%q]
    roots: [%q]
`, everything, fs, dir, dir))
}

// toolResults are the tool messages of a request, by call id.
func toolResults(req *chatapi.Request) map[string]string {
	out := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID], _ = m.Content.(string)
		}
	}
	return out
}

// bigMessage is an echo argument well over the 25,000-token cap.
var bigMessage = strings.Repeat("lorem ipsum dolor sit amet ", 8000)

// everythingTask is a model that, asked to try server-everything, calls
// six tools at once (a sum, a file read, a long operation with progress,
// an elicitation, a sampling request answered by the same model, a huge
// echo), then answers with what they returned. A request without stream
// is the server's sampling request.
func everythingTask(dir string) chattest.Script {
	return func(_ int, req *chatapi.Request) chattest.Turn {
		if !req.Stream {
			return chattest.Turn{Text: "Hello from the sampled model."}
		}
		res := toolResults(req)
		if len(res) == 0 {
			return chattest.Turn{Reasoning: "Six independent calls: run them together.", Text: "Running six tools.", Calls: []chattest.Call{
				{Name: "mcp__everything__get-sum", Args: `{"a":2,"b":40}`},
				{Name: "mcp__filesystem__read_text_file", Args: fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "note.txt"))},
				{Name: "mcp__everything__trigger-long-running-operation", Args: `{"duration":1,"steps":2}`},
				{Name: "mcp__everything__trigger-elicitation-request", Args: `{}`},
				{Name: "mcp__everything__trigger-sampling-request", Args: `{"prompt":"Say hello","maxTokens":20}`},
				{Name: "mcp__everything__echo", Args: fmt.Sprintf(`{"message":%q}`, bigMessage)},
			}}
		}
		var b strings.Builder
		b.WriteString("Results:")
		for _, m := range req.Messages {
			if m.Role == "tool" {
				fmt.Fprintf(&b, "\n- %s", agentterm.Short(m.Content.(string), 100))
			}
		}
		return chattest.Turn{Reasoning: "All six answered.", Text: b.String()}
	}
}

// A task over server-everything and server-filesystem: six calls of one
// turn run concurrently and come back in order, the elicitation answered
// as --elicit says, the server's sampling request answered by the same
// model, the long operation waited for, the huge echo cut with the whole
// of it in the session directory.
func TestAgentEverything(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("the note says 42"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := everythingAgentConfig(t, dir)
	sessions := agentEnv(t)
	srv := chattest.New(t, everythingTask(dir))
	r := mcpbridge(t, "", "agent", "--config", cfg, "--base-url", srv.URL, "--yes", "--elicit", "decline", "-p", "Try server-everything's tools.")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("answer:\n%s", r.stdout)
	var final *chatapi.Request
	var sampled bool
	for _, req := range srv.Requests() {
		if !req.Stream {
			sampled = true
		} else if len(toolResults(req)) > 0 {
			final = req
		}
	}
	if final == nil || !sampled {
		t.Fatalf("no final request (%v) or no sampling (%v)", final, sampled)
	}
	res := toolResults(final)
	for id, want := range map[string]string{
		"call_1_0": "42",
		"call_1_1": "the note says 42",
		"call_1_2": "Long running operation completed",
		"call_1_3": "decline",
		"call_1_4": "Hello from the sampled model.",
		"call_1_5": "result cut at 25000 of its",
	} {
		if !strings.Contains(res[id], want) {
			t.Errorf("result of %s: %q, want it to hold %q", id, agentterm.Short(res[id], 300), want)
		}
	}
	spilled, _ := filepath.Glob(filepath.Join(sessions, "*", "mcp__everything__echo-call_1_5.txt"))
	if len(spilled) != 1 || !strings.Contains(res["call_1_5"], spilled[0]) {
		t.Fatalf("spilled %v; result %q", spilled, agentterm.Short(res["call_1_5"], 300))
	}
	if b, err := os.ReadFile(spilled[0]); err != nil || !strings.Contains(string(b), bigMessage) {
		t.Errorf("the spilled file does not hold the whole result: %v", err)
	}
	if !strings.Contains(r.stdout, "the note says 42") || !strings.Contains(r.stdout, "The sum of 2 and 40 is 42.") {
		t.Errorf("answer %q", r.stdout)
	}
}
