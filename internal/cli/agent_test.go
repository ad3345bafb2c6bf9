package cli

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
)

// agentEnv sets what an agent run reads: the key and a sessions
// directory of the test's own; it returns the sessions directory.
func agentEnv(t *testing.T) string {
	t.Helper()
	state := t.TempDir()
	t.Setenv("DEEPSEEK_API_KEY", chattest.Key)
	t.Setenv("XDG_STATE_HOME", state)
	return filepath.Join(state, "mcpbridge", "sessions")
}

// userConfig makes the test's user config (XDG_CONFIG_HOME) hold data;
// it returns the file's path.
func userConfig(t *testing.T, data string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	user := filepath.Join(home, "mcpbridge", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return user
}

// jsonLines decodes agent --json's output.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// kinds are the event types, text and reasoning pieces run together.
func kinds(evs []map[string]any) []string {
	var out []string
	for _, ev := range evs {
		k := ev["type"].(string)
		if len(out) > 0 && (k == "text" || k == "reasoning") && out[len(out)-1] == k {
			continue
		}
		out = append(out, k)
	}
	return out
}

// A headless multi-tool task over the demo server: -p prints the answer;
// --json prints the documented events, the last a result with usage
// totals; the session is saved, and --continue resumes it with its
// history (the tools are not called again).
func TestAgentHeadless(t *testing.T) {
	sessions := agentEnv(t)
	t.Chdir(t.TempDir()) // the embedded default: the demo server
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Reasoning: "Add, and the weather.", Text: "Let me check.", Calls: []chattest.Call{
			{Name: "mcp__demo__add", Args: `{"a":2,"b":3}`}, {Name: "mcp__demo__weather", Args: `{"city":"Paris"}`}}},
		chattest.Turn{Text: "2+3 is 5; Paris is mild."},
		chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":4,"b":4}`}}},
		chattest.Turn{Text: "8."},
	))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "Add 2 and 3, and the weather in Paris.", "--yes")
	if r.code != 0 || r.stdout != "2+3 is 5; Paris is mild.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	second := srv.Requests()[1].Messages
	if second[0].Role != "system" || second[2].ReasoningContent != "Add, and the weather." || second[3].Content != "5" || !strings.Contains(second[4].Content.(string), "Paris") {
		t.Errorf("second request %+v", second)
	}

	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--json", "--continue", "-p", "And 4+4?", "--yes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	evs := jsonLines(t, r.stdout)
	want := []string{"session", "reasoning", "usage", "tool_call", "tool_result", "reasoning", "text", "usage", "result"}
	if d := cmp.Diff(want, kinds(evs)); d != "" {
		t.Errorf("events (-want +got):\n%s\n%s", d, r.stdout)
	}
	last := evs[len(evs)-1]
	if last["text"] != "8." || last["total"].(map[string]any)["total_tokens"].(float64) == 0 || last["steps"] != 2.0 {
		t.Errorf("result %v", last)
	}
	for _, ev := range evs {
		if ev["type"] == "tool_result" && (ev["name"] != "mcp__demo__add" || ev["text"] != "8" || ev["id"] != "call_3_0") {
			t.Errorf("tool result %v", ev)
		}
	}
	resumed := srv.Requests()[2].Messages
	if len(resumed) != 7 || resumed[6].Content != "And 4+4?" || resumed[5].Content != "2+3 is 5; Paris is mild." {
		t.Errorf("resumed conversation: %+v", resumed)
	}
	id := evs[0]["session"].(string)
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--resume", id, "-p", "Thanks.")
	if last := srv.Requests()[len(srv.Requests())-1].Messages; r.code != 0 || len(last) != 11 || last[10].Content != "Thanks." || last[9].Content != "8." {
		t.Errorf("--resume %s: exit %d, %d messages\n%s", id, r.code, len(last), r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl"))
	if len(files) != 1 || evs[0]["session"] != strings.TrimSuffix(filepath.Base(files[0]), ".jsonl") {
		t.Errorf("sessions %v, first event %v", files, evs[0])
	}
	if b, _ := os.ReadFile(files[0]); strings.Count(string(b), "\n") != 11 || strings.Contains(string(b), chattest.Key) {
		t.Errorf("saved session:\n%s", b)
	}
}

// A question whose run failed (the API unreachable, then refusing) and
// is asked again with --continue is asked once: the model sees it a
// single time, never two user turns in a row (which some APIs refuse),
// and the conversation read back later holds it once, with its answer.
func TestAgentRetryAfterAFailedRun(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	gone := httptest.NewServer(nil)
	unreachable := gone.URL // nothing listens there once closed
	gone.Close()
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Paris."}, chattest.Turn{Text: "About two million."}))
	srv.Fail(chattest.Fault{Status: 402, Message: "Insufficient Balance"})
	const q = "What is the capital of France?"
	if r := mcpbridge(t, "", "agent", "--base-url", unreachable, "-p", q); r.code != ExitFailed {
		t.Fatalf("an unreachable API: exit %d\nstderr %s", r.code, r.stderr)
	}
	if r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "--continue", "-p", q); r.code != ExitFailed || !strings.Contains(r.stderr, "Insufficient Balance") {
		t.Fatalf("a refusing API: exit %d\nstderr %s", r.code, r.stderr)
	}
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "--continue", "-p", q)
	if r.code != 0 || r.stdout != "Paris.\n" {
		t.Fatalf("the retry: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--continue", "-p", "And its population?")
	if r.code != 0 {
		t.Fatalf("the next question: exit %d\nstderr %s", r.code, r.stderr)
	}
	conversation := func(i int) []string {
		var out []string
		for _, m := range srv.Requests()[i].Messages[1:] { // after the system prompt
			out = append(out, m.Role+": "+m.Content.(string))
		}
		return out
	}
	if d := cmp.Diff([]string{"user: " + q}, conversation(1)); d != "" {
		t.Errorf("the retry's request (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"user: " + q, "assistant: Paris.", "user: And its population?"}, conversation(2)); d != "" {
		t.Errorf("the next question's request (-want +got):\n%s", d)
	}
}

// A run in text says, last on stderr, which session it saved and the
// command that goes on with it, after its answer, its failure or its
// --max-steps stop; stdout holds the answer alone, and --json is left as
// it was (its session and result lines carry the id). The command said
// goes on with that session.
func TestAgentSaysHowToGoOn(t *testing.T) {
	sessions := agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Paris."}, chattest.Turn{Text: "Rome."},
		chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}}}))
	howToGoOn := regexp.MustCompile(`(?m)^mcpbridge: session (\S+) saved; continue it with: mcpbridge agent --resume (\S+)\n\z`)
	said := func(r run) string {
		t.Helper()
		m := howToGoOn.FindStringSubmatch(r.stderr)
		if m == nil || m[1] != m[2] {
			t.Fatalf("exit %d: stderr does not end saying how to go on:\n%s", r.code, r.stderr)
		}
		return m[1]
	}
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "Capital of France?")
	if r.code != 0 || r.stdout != "Paris.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	id := said(r)
	if files, _ := filepath.Glob(filepath.Join(sessions, "*.jsonl")); len(files) != 1 || filepath.Base(files[0]) != id+".jsonl" {
		t.Errorf("said session %s; saved %v", id, files)
	}

	srv.Fail(chattest.Fault{Status: 402, Message: "Insufficient Balance"})
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--resume", id, "-p", "Capital of Italy?")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "mcpbridge: agent: ") || said(r) != id {
		t.Errorf("a failed run: exit %d\nstderr %s", r.code, r.stderr)
	}
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--resume", id, "-p", "Capital of Italy?")
	if r.code != 0 || r.stdout != "Rome.\n" || said(r) != id {
		t.Errorf("going on as said: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if msgs := srv.Requests()[len(srv.Requests())-1].Messages; len(msgs) != 4 || msgs[2].Content != "Paris." {
		t.Errorf("going on as said: the conversation %+v, want the first exchange before", msgs)
	}

	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--yes", "--max-steps", "1", "-p", "add")
	if r.code != ExitMaxSteps || !strings.Contains(r.stderr, "mcpbridge: agent: stopped after 1 steps (--max-steps)\n") || said(r) == id {
		t.Errorf("--max-steps: exit %d\nstderr %s", r.code, r.stderr)
	}

	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--json", "--continue", "-p", "add")
	if strings.Contains(r.stderr, "continue it with") {
		t.Errorf("--json: stderr %s", r.stderr)
	}
	if evs := jsonLines(t, r.stdout); len(evs) == 0 || evs[0]["session"] == nil || evs[len(evs)-1]["session"] != evs[0]["session"] {
		t.Errorf("--json: %s", r.stdout)
	}
}

// A conversation the API refuses as longer than the model's context
// window (DeepSeek's 400) fails saying so in words, and how to go on: a
// new session, which the run then starts without --continue; not the
// terminal's /clear, which -p has not, nor --resume of the session, which
// would fail alike.
func TestAgentContextTooLongSaysHowToGoOn(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Paris."}, chattest.Turn{Text: "Fresh."}))
	if r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "Capital of France?"); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	srv.Fail(chattest.Fault{Status: 400, Message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens " +
		"(131808 in the messages, 8192 in the completion). Please reduce the length of the messages or completion."})
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "--continue", "-p", "And the rest?")
	said := regexp.MustCompile(`(?m)^mcpbridge: agent: \S+ \(deepseek-flash\) answered 400 Bad Request: This model's maximum context length is 131072 tokens\. .*` +
		`\(the conversation is longer than the model's context window\)\n` +
		`mcpbridge: session \S+ is longer than the model's context window, so it cannot go on: start a new session \(mcpbridge agent without --resume or --continue\)` +
		`, and ask for less at once if one prompt's work filled it\n\z`)
	if r.code != ExitFailed || !said.MatchString(r.stderr) || strings.Contains(r.stderr, "/clear") || strings.Contains(r.stderr, "continue it with") {
		t.Errorf("exit %d\nstderr %s\nwant it to match %s", r.code, r.stderr, said)
	}
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "And the rest?")
	if msgs := srv.Requests()[len(srv.Requests())-1].Messages; r.code != 0 || len(msgs) != 2 || msgs[1].Content != "And the rest?" {
		t.Errorf("a new session: exit %d, conversation %+v\n%s", r.code, msgs, r.stderr)
	}
}

// -p prints the answer as call prints a result: control characters that a
// tool's output could have led the model to repeat (an OSC 52 write to the
// clipboard, a screen clear) are shown escaped, never sent to the terminal.
func TestAgentHeadlessAnswerEscaped(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Done.\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\nBye."}))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "hi")
	if want := "Done.\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J\nBye.\n"; r.code != 0 || r.stdout != want {
		t.Errorf("exit %d\nstdout %q, want %q\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
}

// The ways an agent run ends: --max-steps (3, resumable), a model
// failure shown as the API wrote it without the key (1), tools denied
// without --yes under -p (the model is told, the person too), and usage
// mistakes (2) before any server starts.
func TestAgentExits(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	loop := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}}}))
	r := mcpbridge(t, "", "agent", "--base-url", loop.URL, "--yes", "--max-steps", "2", "-p", "loop")
	if r.code != ExitMaxSteps || !strings.Contains(r.stderr, "stopped after 2 steps (--max-steps)\nmcpbridge: session ") || r.stdout != "" {
		t.Errorf("max steps: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "agent", "--base-url", loop.URL, "--yes", "--max-steps", "1", "--json", "-p", "loop")
	if evs := jsonLines(t, r.stdout); r.code != ExitMaxSteps || evs[len(evs)-1]["error"] != agent.ErrMaxSteps.Error() {
		t.Errorf("max steps --json: exit %d\n%s", r.code, r.stdout)
	}

	broken := writeConfig(t, "- {id: gone, name: mcp-client, config: {serverName: gone, transport: stdio, command: /nonexistent/server}}\n")
	r = mcpbridge(t, "", "agent", "--config", broken, "--base-url", loop.URL, "--json", "--max-steps", "1", "-p", "hi")
	if evs := jsonLines(t, r.stdout); len(evs) < 2 || evs[1]["type"] != "notice" || !strings.Contains(evs[1]["text"].(string), `server "gone"`) {
		t.Errorf("a failed server under --json:\n%s", r.stdout)
	}

	failing := chattest.New(t, chattest.Turns(chattest.Turn{Text: "never"}))
	failing.Fail(chattest.Fault{Status: 402, Message: "Insufficient Balance for key " + chattest.Key})
	r = mcpbridge(t, "", "agent", "--base-url", failing.URL, "-p", "hi")
	if want := "answered 402 Payment Required: Insufficient Balance for key [redacted]"; r.code != ExitFailed || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr+r.stdout, chattest.Key) {
		t.Errorf("model failure: exit %d\nstderr %s", r.code, r.stderr)
	}

	busy := chattest.New(t, chattest.Turns(chattest.Turn{Text: "answered"}))
	busy.Fail(chattest.Fault{Status: 503, Message: "Server busy"})
	r = mcpbridge(t, "", "agent", "--base-url", busy.URL, "-p", "hi")
	said := regexp.MustCompile(`mcpbridge: the model's API failed \(` + regexp.QuoteMeta(busy.URL) + ` \(\S+\) answered 503 Service Unavailable: Server busy\); trying again in 1s, attempt 2 of 4\n`)
	if r.code != 0 || r.stdout != "answered\n" || !said.MatchString(r.stderr) {
		t.Errorf("a busy model API: exit %d\nstdout %q\nstderr %s\nwant on stderr %s", r.code, r.stdout, r.stderr, said)
	}

	denied := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}}}, chattest.Turn{Text: "I could not add."}))
	r = mcpbridge(t, "", "agent", "--base-url", denied.URL, "-p", "-")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "the prompt on stdin is empty") {
		t.Errorf("-p - with nothing: exit %d %s", r.code, r.stderr)
	}
	r = mcpbridge(t, "add one and one", "agent", "--base-url", denied.URL, "-p", "-")
	if r.code != 0 || r.stdout != "I could not add.\n" || !strings.Contains(r.stderr, "tool mcp__demo__add was not run: with -p tools run only with --yes") {
		t.Errorf("without --yes: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if msgs := denied.Requests()[1].Messages; msgs[1].Content != "add one and one" || !strings.Contains(msgs[3].Content.(string), "the user denied this tool call") {
		t.Errorf("the model was not told: %+v", msgs)
	}

	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"agent"}, "", "without -p stdin must be a terminal"},
		{[]string{"agent", "-p", "x", "--resume", "a", "--continue"}, "", "--resume and --continue cannot be used together"},
		{[]string{"agent", "-p", "x", "--max-steps", "0"}, "", "--max-steps must be a whole number of at least 1"},
		{[]string{"agent", "-p", "x", "--base-url", "ftp://x"}, "", "--base-url must be an absolute http(s) URL"},
		{[]string{"agent", "-p", "x", "--resume", "../etc"}, "", `--resume: "../etc" is not a session id`},
		{[]string{"agent", "-p", "x", "--resume", "20260101-000000-00000000"}, "", "--resume: no saved session 20260101-000000-00000000"},
		{[]string{"agent", "-p", "x", "stray"}, "", `unexpected argument "stray"`},
		{[]string{"agent", "-p"}, "", "flag -p needs a value"},
		{[]string{"agent", "-p", "x", "--yes=false"}, "", "agent: flag --yes=false takes no value"},
		{[]string{"agent", "-p", "x", "--continue=no"}, "", "agent: flag --continue=no takes no value"},
		{[]string{"agent", "-p", "x"}, "unset", "and its key variable DEEPSEEK_API_KEY is not set: export DEEPSEEK_API_KEY=<your DeepSeek key>, or add a model entry for the model you use"},
	} {
		if c.env == "unset" {
			t.Setenv("DEEPSEEK_API_KEY", "")
		}
		r := mcpbridge(t, "", c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	// Under --json a run that fails before it begins still ends stdout with
	// its result line, as a script reading it expects.
	t.Setenv("DEEPSEEK_API_KEY", "")
	r = mcpbridge(t, "", "agent", "-p", "x", "--json")
	var last struct{ Type, Error string }
	if err := json.Unmarshal([]byte(r.stdout), &last); err != nil || r.code != ExitUsage || last.Type != "result" || !strings.Contains(last.Error, "DEEPSEEK_API_KEY is not set") {
		t.Errorf("--json without the key: exit %d, stdout %q (%v), want a result line with the error", r.code, r.stdout, err)
	}
}

// With tool search on, the model sees search_tools and the tools the
// prompt names; a search (run without --yes: search_tools only looks)
// loads more for the next step.
func TestAgentToolSearch(t *testing.T) {
	agentEnv(t)
	cfg := writeConfig(t, `- id: demo
  name: mcp-client
  config:
    serverName: demo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
- id: search
  name: tool-search
  config: {mode: on}
`)
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: "search_tools", Args: `{"query":"weather in a city"}`}}},
		chattest.Turn{Text: "found it"},
	))
	r := mcpbridge(t, "", "agent", "--config", cfg, "--base-url", srv.URL, "-p", "Echo with mcp__demo__echo, then find a weather tool.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	names := func(i int) []string {
		var out []string
		for _, tl := range srv.Requests()[i].Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	if d := cmp.Diff([]string{"mcp__demo__echo", "search_tools"}, names(0)); d != "" {
		t.Errorf("first request's tools (-want +got):\n%s", d)
	}
	if got := names(1); !slices.Contains(got, "mcp__demo__weather") || !slices.Contains(got, "mcp__demo__echo") {
		t.Errorf("after the search: %v", got)
	}
}

// A smoke test of the real DeepSeek API: it runs only when
// DEEPSEEK_API_KEY is set (never in CI, which has no key) and does a
// two-tool task over the demo server.
func TestAgentDeepSeekSmoke(t *testing.T) {
	key := os.Getenv("DEEPSEEK_API_KEY")
	if key == "" {
		t.Skip("DEEPSEEK_API_KEY is not set: the real API is not tried")
	}
	agentEnv(t)
	t.Setenv("DEEPSEEK_API_KEY", key)
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "agent", "--yes", "--json", "-p", "Use the tools to add 19 and 23, and to get the weather in Paris. Reply with the sum and the temperature.")
	evs := jsonLines(t, r.stdout)
	if r.code != 0 || len(evs) == 0 || !strings.Contains(evs[len(evs)-1]["text"].(string), "42") || !slices.Contains(kinds(evs), "tool_result") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// A call refused under -p says every way to let it run: --yes, the user
// config's permissions.allow (named, with the patterns that fit), or
// trusted: true for read-only tools; the allow list it names does let
// the tool run on the next run.
func TestAgentHeadlessDenialSaysHowToAllow(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	user := userConfig(t, "- {id: permissions, name: permissions, config: {deny: [mcp__other__x]}}\n") // the demo runs beside it
	add := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}}}
	srv := chattest.New(t, chattest.Turns(add, chattest.Turn{Text: "not added"}, add, chattest.Turn{Text: "added"}))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "add")
	want := "tool mcp__demo__add was not run: with -p tools run only with --yes, or when permissions.allow in " + user +
		` lists them (allow: [mcp__demo__add], or ["mcp__demo__*"] for every tool of the server), or, read-only ones, from servers marked trusted: true`
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d\nstderr %s\nwant %s", r.code, r.stderr, want)
	}
	if err := os.WriteFile(user, []byte("- {id: permissions, name: permissions, config: {allow: [mcp__demo__add]}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "add"); r.code != 0 || r.stdout != "added\n" || strings.Contains(r.stderr, "was not run") {
		t.Errorf("allowed as told: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}

// Under -p without --yes every refused call is its own notice: two tools
// the model wanted, two lines naming them (one notice stood for both).
func TestAgentHeadlessEachDenialNoticed(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	both := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}, {Name: "mcp__demo__echo", Args: `{"message":"hi"}`}}}
	nothing := chattest.Turn{Text: "Nothing ran."}
	srv := chattest.New(t, chattest.Turns(both, nothing, both, nothing))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "add and echo")
	for _, name := range []string{"mcp__demo__add", "mcp__demo__echo"} {
		if want := "tool " + name + " was not run: with -p tools run only with --yes"; r.code != 0 || strings.Count(r.stderr, want) != 1 {
			t.Errorf("want one notice %q; exit %d\nstderr %s", want, r.code, r.stderr)
		}
	}
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "--json", "-p", "add and echo")
	notices := 0
	for _, ev := range jsonLines(t, r.stdout) {
		if ev["type"] == "notice" && strings.Contains(ev["text"].(string), "was not run") {
			notices++
		}
	}
	if notices != 2 {
		t.Errorf("--json: %d notices of refused calls, want 2:\n%s", notices, r.stdout)
	}
}

// The user config's deny patterns refuse a tool without asking, even
// with --yes, and say which pattern in which file; they hold with
// --config too. A project file may deny, but its allow list is not
// used (a cloned repository would approve its own tools), and says so.
// An invalid permissions entry stops the agent before anything runs.
func TestAgentPermissionsDeny(t *testing.T) {
	agentEnv(t)
	user := userConfig(t, "- {id: perms, name: permissions, config: {deny: [mcp__demo__echo]}}\n")
	const demo = "- id: demo\n  name: mcp-client\n  config: {serverName: demo, transport: stdio, command: \"${MCPBRIDGE_EXE}\", args: [demo-server]}\n"
	cfg := writeConfig(t, demo)
	both := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__echo", Args: `{"message":"hi"}`}, {Name: "mcp__demo__add", Args: `{"a":1,"b":2}`}}}
	srv := chattest.New(t, chattest.Turns(both, chattest.Turn{Text: "Added only."}, both, chattest.Turn{Text: "Nothing."}))
	r := mcpbridge(t, "", "agent", "--config", cfg, "--base-url", srv.URL, "--yes", "-p", "echo and add")
	if want := `tool mcp__demo__echo was refused without asking: denied by "mcp__demo__echo" in ` + user + " (permissions.deny)"; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want %q in\n%s", r.code, want, r.stderr)
	}
	if got := toolResults(srv.Requests()[1]); !strings.Contains(got["call_1_0"], "the user denied this tool call") || got["call_1_1"] != "3" {
		t.Errorf("results: %v", got)
	}

	project := t.TempDir()
	t.Chdir(project)
	os.WriteFile("mcpbridge.yaml", []byte(demo+
		"- {id: perms, name: permissions, config: {allow: [mcp__demo__add, mcp__demo__echo], deny: [mcp__demo__weather]}}\n"), 0o644)
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "echo and add")
	for _, want := range []string{
		"mcpbridge.yaml: the allow list of a project's permissions entry is not used (a repository may not approve its own tools); its deny list is: put allow patterns in " + user,
		"tool mcp__demo__echo was refused without asking",
		"tool mcp__demo__add was not run: with -p tools run only with --yes",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("project file: want %q in\n%s", want, r.stderr)
		}
	}

	os.WriteFile(user, []byte("- {id: perms, name: permissions, config: {deny: ['mcp__*__x']}}\n"), 0o600)
	r = mcpbridge(t, "", "agent", "--config", cfg, "--base-url", srv.URL, "--yes", "-p", "hi")
	if want := `config.deny[0]: "mcp__*__x" may hold * only at its end`; r.code != ExitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "agent: not started") {
		t.Errorf("invalid entry: exit %d, want %q in\n%s", r.code, want, r.stderr)
	}
}

// Someone trying the embedded demo who answers "always" gets a user
// config holding only the permissions entry: the demo's servers stay on
// the next run (the file replaced the default, and the allowed tool was
// unknown), and the kept pattern lets its tool run under -p.
func TestAgentPermissionsKeepTheDemo(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	userConfig(t, "- id: permissions\n  name: permissions\n  config:\n    allow: [mcp__demo__add]\n")
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":2,"b":2}`}}}, chattest.Turn{Text: "4."}))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "add")
	if r.code != 0 || len(srv.Requests()) != 2 || toolResults(srv.Requests()[len(srv.Requests())-1])["call_1_0"] != "4" {
		t.Fatalf("exit %d, %d model requests, the last's results %v\n%s", r.code, len(srv.Requests()), toolResults(srv.Requests()[len(srv.Requests())-1]), r.stderr)
	}
}

// With --config the user config is still read for its permissions: one
// that does not parse stops the agent, saying why it was read.
func TestAgentPermissionsUserConfigBroken(t *testing.T) {
	agentEnv(t)
	user := userConfig(t, "- id: p\n\tname: permissions\n")
	cfg := writeConfig(t, "[]\n")
	r := mcpbridge(t, "", "agent", "--config", cfg, "--base-url", "http://127.0.0.1:1", "-p", "hi")
	if want := "agent: not started: the agent reads the permissions of the user config " + user + ", whatever --config says"; r.code != ExitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, user+":2") {
		t.Errorf("exit %d, want %q in\n%s", r.code, want, r.stderr)
	}
}

// trusted: true lets the agent run a server's read-only tools without
// asking, when the user wrote it; a repository's mcpbridge.yaml may not
// approve its own tools that way (as its permissions' allow list is not
// used): under -p without --yes its read-only tool is not run, and a
// notice says why.
func TestProjectMayNotTrustItsOwnServer(t *testing.T) {
	agentEnv(t)
	trusted := strings.Replace(demoEntry, "    transport: stdio\n", "    transport: stdio\n    trusted: true\n", 1)
	turns := func() *chattest.Server {
		return chattest.New(t, chattest.Turns(
			chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__weather", Args: `{"city":"Paris"}`}}},
			chattest.Turn{Text: "Done."}))
	}
	srv := turns()
	inDir(t, trusted)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "Weather in Paris?")
	if !strings.Contains(r.stderr, "tool mcp__demo__weather was not run") || !strings.Contains(r.stderr, "trusted: true of a project's entry (demo) is not used") {
		t.Errorf("a project's trusted server: exit %d, stderr %q; want its tool not run, and why", r.code, r.stderr)
	}
	srv = turns()
	t.Chdir(t.TempDir())
	userConfig(t, trusted)
	r = mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "Weather in Paris?")
	if r.code != 0 || strings.Contains(r.stderr, "was not run") {
		t.Errorf("the user's trusted server: exit %d, stderr %q; want its read-only tool run", r.code, r.stderr)
	}
}

// A user config that is there but cannot be read (a link into a folder
// that is not mounted) stops the agent, saying why: it would otherwise
// run without the user's deny rules.
func TestAgentStopsWithoutItsUserConfig(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	user := userConfig(t, "")
	if err := os.Remove(user); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "unmounted", "config.yaml"), user); err != nil {
		t.Fatal(err)
	}
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Done."}))
	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "the user config "+user+" cannot be looked at") || len(srv.Requests()) != 0 {
		t.Errorf("a user config linked to a file that is gone: exit %d, stderr %q, %d model requests", r.code, r.stderr, len(srv.Requests()))
	}
}
