package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
)

// codeModeProgram reads two of the demo server's tools at once and
// returns a summary.
const codeModeProgram = `const [s, w] = await Promise.all([tools.demo.add({a: 2, b: 3}), tools.demo.weather({city: "Paris"})]);
return {sum: s.text, denied: s.isError, paris: w.text.includes("Paris")}`

// codeModeTurns are a model that runs codeModeProgram, then answers.
func codeModeTurns(t *testing.T) *chattest.Server {
	args, _ := json.Marshal(map[string]string{"code": codeModeProgram})
	return chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: "run_code", Args: string(args)}}},
		chattest.Turn{Text: "The sum is 5."},
	))
}

// agent --code-mode: the model sees the three code mode tools and the
// declaration in its system prompt, and one run_code call makes two
// calls of the demo server at once.
func TestAgentCodeMode(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir()) // the embedded default: the demo server
	srv := codeModeTurns(t)
	r := mcpbridge(t, "", "agent", "--code-mode", "--base-url", srv.URL, "-p", "Add 2 and 3 and get Paris's weather.", "--yes")
	if r.code != 0 || r.stdout != "The sum is 5.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	first := srv.Requests()[0]
	var names []string
	for _, tl := range first.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "describe_api,run_code,search_api" {
		t.Errorf("the model saw the tools %v, want only code mode's", names)
	}
	system := first.Messages[0].Content.(string)
	if !strings.Contains(system, "namespace demo {") || !strings.Contains(system, "function add(args: {") {
		t.Errorf("the system prompt lacks the declaration:\n%s", system)
	}
	result := srv.Requests()[1].Messages[3].Content.(string)
	if result != `{"sum":"5","denied":false,"paris":true}` {
		t.Errorf("run_code answered %q", result)
	}
}

// With -p and no --yes, run_code runs but each call its program makes is
// refused as a direct call would be.
func TestAgentCodeModeInnerCallsNeedApproval(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := codeModeTurns(t)
	r := mcpbridge(t, "", "agent", "--code-mode", "--base-url", srv.URL, "-p", "Add 2 and 3.")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr %s", r.code, r.stderr)
	}
	result := srv.Requests()[1].Messages[3].Content.(string)
	if !strings.Contains(result, `"denied":true`) {
		t.Errorf("run_code answered %q, want the inner calls denied", result)
	}
	if !strings.Contains(r.stderr, "was not run") {
		t.Errorf("stderr does not say the call was not run:\n%s", r.stderr)
	}
}
