package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// agent --code-mode over the real server-everything and server-filesystem:
// one run_code call reads two files, adds their numbers with
// server-everything's get-sum, and returns a summary; the declaration the
// model read names both servers' tools.
func TestAgentCodeModeEverything(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"a.txt": "12", "b.txt": "30"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := everythingAgentConfig(t, dir)
	agentEnv(t)
	system, result := agentRunCode(t, cfg, sumProgram(dir), "Add the numbers in a.txt and b.txt.")
	for _, want := range []string{"namespace everything {", "function get_sum(", "namespace filesystem {", "function read_text_file("} {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt lacks %q", want)
		}
	}
	for _, want := range []string{"read 12 and 30", `"a":"12"`, `"b":"30"`, "42"} {
		if !strings.Contains(result, want) {
			t.Errorf("run_code answered %q, want it to hold %q", result, want)
		}
	}
}

// agent --code-mode: an image an inner call returns (server-everything's
// tiny image) is saved beside the session's cut results, and the program
// reads its path, in the block and the text, not its base64.
func TestAgentCodeModeSavesImages(t *testing.T) {
	cfg := everythingAgentConfig(t, t.TempDir())
	agentEnv(t)
	program := `const img = await tools.everything.get_tiny_image({});
const blocks = img.content.filter(b => b.type === "image");
return {saved: blocks.map(b => b.saved), data: blocks.some(b => "data" in b), text: img.text}`
	_, result := agentRunCode(t, cfg, program, "Show me the tiny image.")
	var got struct {
		Saved []string
		Data  bool
		Text  string
	}
	if err := json.Unmarshal([]byte(result), &got); err != nil || len(got.Saved) != 1 || got.Data {
		t.Fatalf("run_code answered %q (%v), want one image block with its path and no data", result, err)
	}
	data, err := os.ReadFile(got.Saved[0])
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("the saved image %s: %v (%d bytes)", got.Saved[0], err, len(data))
	}
	if !strings.Contains(got.Text, "[image saved: "+got.Saved[0]) {
		t.Errorf("the result's text %q does not name %s", got.Text, got.Saved[0])
	}
}

// sumProgram reads a.txt and b.txt of dir with server-filesystem, adds
// their numbers with server-everything's get-sum, and returns a summary.
func sumProgram(dir string) string {
	return fmt.Sprintf(`const [a, b] = await Promise.all(["a.txt", "b.txt"].map(f => tools.filesystem.read_text_file({path: %q + "/" + f})));
const sum = await tools.everything.get_sum({a: Number(a.text), b: Number(b.text)});
console.log("read", a.text, "and", b.text);
return {a: a.text, b: b.text, sum: sum.text}`, dir)
}

// agentRunCode runs agent --code-mode over cfg with a model that runs
// program with run_code, then answers; it returns the system prompt and
// what run_code answered.
func agentRunCode(t *testing.T, cfg, program, prompt string) (system, result string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"code": program})
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: "run_code", Args: string(args)}}},
		chattest.Turn{Text: "Done."},
	))
	r := mcpbridge(t, "", "agent", "--code-mode", "--config", cfg, "--base-url", srv.URL, "--yes", "-p", prompt)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	return srv.Requests()[0].Messages[0].Content.(string), srv.Requests()[1].Messages[3].Content.(string)
}
