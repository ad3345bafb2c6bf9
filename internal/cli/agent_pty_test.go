package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// screen is what a program wrote on its pseudo-terminal.
type screen = lockedBuffer

// agentOnPTY runs `mcpbridge agent args...` on a new pseudo-terminal
// (stdin, stdout, stderr, and its controlling terminal, so Ctrl-C is
// SIGINT); the returned function waits for it and returns its exit code.
func agentOnPTY(t *testing.T, args ...string) (*os.File, *screen, func() int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"agent"}, args...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	scr := &screen{}
	copied := make(chan struct{})
	go func() {
		io.Copy(scr, ptmx) // until the terminal closes (EIO)
		close(copied)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		ptmx.Close()
		<-copied
	})
	wait := func() int {
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(exitWait):
			// Its goroutines, written on the terminal, say where it waits.
			cmd.Process.Signal(syscall.SIGQUIT)
			<-exited
			t.Errorf("the agent had not exited %v later; it was sent SIGQUIT", exitWait)
		}
		return cmd.ProcessState.ExitCode()
	}
	return ptmx, scr, wait
}

// exitWait bounds the wait for the agent's exit: a test that expects it
// fails with the agent's goroutines rather than waiting for the run's
// timeout.
const exitWait = time.Minute

// expect waits until the screen shows want after the first from bytes;
// it returns where want ends.
func expect(t *testing.T, scr *screen, from int, want string) int {
	t.Helper()
	end := -1
	mcptest.Eventually(t, 30*time.Second, func() bool {
		s := scr.String()
		if i := strings.Index(s[min(from, len(s)):], want); i >= 0 {
			end = from + i + len(want)
			return true
		}
		return false
	}, "the terminal did not show %q:\n%q", want, scr.String())
	return end
}

// At a terminal the person approves calls with one key, no Enter, the
// prompt saying what each key does: always this tool (not asked again),
// deny (the tool does not run, the model is told), the answer is
// streamed; /tools lists what the model sees, /exit ends.
func TestAgentApprovalOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	add := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":2,"b":3}`}}}
	echo := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__echo", Args: `{"message":"secret"}`}}}
	srv := chattest.New(t, chattest.Turns(add, chattest.Turn{Text: "It is 5."}, add, chattest.Turn{Text: "Still 5."}, echo, chattest.Turn{Text: "Echo refused."}))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "add 2 and 3\r")
	at = expect(t, scr, at, "Run mcp__demo__add")
	at = expect(t, scr, at, "[y]es once, always this [t]ool, always this [s]erver, [n]o (press the key, no Enter): ")
	io.WriteString(ptmx, "t")
	at = expect(t, scr, at, "yes, always this tool")
	at = expect(t, scr, at, "It is 5.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "again\r")
	at = expect(t, scr, at, "Still 5.")
	if strings.Contains(scr.String()[at-200:], "Run mcp__demo__add") {
		t.Errorf("asked again after always this tool:\n%q", scr.String())
	}
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "echo it\r")
	at = expect(t, scr, at, "Run mcp__demo__echo")
	at = expect(t, scr, at, "[n]o (press the key, no Enter): ")
	io.WriteString(ptmx, "n")
	at = expect(t, scr, at, "Echo refused.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/tools\r")
	expect(t, scr, at, "the model sees 3 of 3 tools")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 {
		t.Errorf("exit %d:\n%s", code, scr.String())
	}
	reqs := srv.Requests()
	if got := toolResults(reqs[5]); !strings.Contains(got["call_5_0"], "the user denied this tool call") || toolResults(reqs[3])["call_3_0"] != "5" {
		t.Errorf("results: %v / %v", toolResults(reqs[3]), got)
	}
}

// Ctrl-C during a long call cancels the turn (the call is cancelled and
// the model is not asked again); the session goes on; a second Ctrl-C
// exits (the turn has ended by then: at the prompt Ctrl-C ends the
// session as Ctrl-D does).
func TestAgentCtrlCOnPTY(t *testing.T) {
	cfg := everythingConfig(t)
	agentEnv(t)
	long := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__everything__trigger-long-running-operation", Args: `{"duration":60,"steps":60}`}}}
	srv := chattest.New(t, chattest.Turns(long, chattest.Turn{Text: "Hi."}, long))
	ptmx, scr, wait := agentOnPTY(t, "--config", cfg, "--base-url", srv.URL, "--yes")
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "run it\r")
	at = expect(t, scr, at, "trigger-long-running-operation 1/60")
	io.WriteString(ptmx, "\x03")
	at = expect(t, scr, at, "turn cancelled")
	at = expect(t, scr, at, "› ")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
	io.WriteString(ptmx, "hello\r")
	at = expect(t, scr, at, "Hi.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "run it again\r")
	at = expect(t, scr, at, "trigger-long-running-operation 1/60")
	io.WriteString(ptmx, "\x03")
	expect(t, scr, at, "Ctrl-C again to exit")
	io.WriteString(ptmx, "\x03")
	if code := wait(); code != 0 {
		t.Errorf("exit %d after two Ctrl-C:\n%s", code, scr.String())
	}
	// The cancelled turn's call got a result, so the conversation stays
	// one the API takes (the second prompt was answered).
	if res := toolResults(srv.Requests()[1]); len(res) != 1 {
		t.Errorf("results sent after the cancelled turn: %v", res)
	}
}

// A server's elicitation during a turn is asked at the terminal, field by
// field, between the line editor's prompts; ":decline" declines it.
func TestAgentElicitOnPTY(t *testing.T) {
	cfg := everythingConfig(t)
	agentEnv(t)
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: "mcp__everything__trigger-elicitation-request", Args: `{}`}}},
		chattest.Turn{Text: "You declined."},
	))
	ptmx, scr, wait := agentOnPTY(t, "--config", cfg, "--base-url", srv.URL, "--yes")
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "ask me\r")
	at = expect(t, scr, at, `Server "everything" asks`)
	at = expect(t, scr, at, "text: ")
	io.WriteString(ptmx, ":decline\r")
	at = expect(t, scr, at, "You declined.")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "\x04")
	if code := wait(); code != 0 {
		t.Errorf("exit %d:\n%s", code, scr.String())
	}
	if res := toolResults(srv.Requests()[1]); !strings.Contains(res["call_1_0"], "decline") {
		t.Errorf("result %v", res)
	}
}

// A tool's result is shown at the terminal, its first lines only; Ctrl-O
// at the prompt, and /expand, show it whole (only "✓ tool (1 ms)" was
// shown).
func TestAgentResultShownOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	var rows []string
	for i := 1; i <= 12; i++ {
		rows = append(rows, fmt.Sprintf("row-%02d", i))
	}
	msg, _ := json.Marshal(map[string]string{"message": strings.Join(rows, "\n")})
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__echo", Args: string(msg)}}}, chattest.Turn{Text: "Echoed."},
		chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":2,"b":3}`}}}, chattest.Turn{Text: "Added."},
	))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL, "--yes")
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "echo the rows\r")
	at = expect(t, scr, at, "✓ mcp__demo__echo")
	shown := expect(t, scr, at, "… 6 more lines; Ctrl-O at the prompt (or /expand) shows the whole result")
	if preview := scr.String()[at:shown]; !strings.Contains(preview, "Echo: row-01") || !strings.Contains(preview, "row-06") || strings.Contains(preview, "row-07") {
		t.Errorf("preview:\n%s", preview)
	}
	at = expect(t, scr, shown, "Echoed.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "\x0f")
	at = expect(t, scr, at, "mcp__demo__echo returned:")
	at = expect(t, scr, at, "row-12")
	io.WriteString(ptmx, "add\r")
	at = expect(t, scr, at, "✓ mcp__demo__add")
	at = expect(t, scr, at, "    5")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/expand\r")
	at = expect(t, scr, at, "mcp__demo__add returned:")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 {
		t.Errorf("exit %d:\n%s", code, scr.String())
	}
}

// "Always" outlasts the run: the pattern is written to the user config's
// permissions entry (the file's comments and entries kept; a second
// answer goes into the same entry), and a later run, -p without --yes,
// runs those tools without asking.
func TestAgentAlwaysKeptOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	before := "# my servers\n- id: demo # the demo\n  name: mcp-client\n  config: {serverName: demo, transport: stdio, command: " + exe + ", args: [demo-server]}\n# the end\n"
	user := userConfig(t, before)
	add := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":2,"b":3}`}}}
	echo := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__echo", Args: `{"message":"hi"}`}}}
	weather := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__weather", Args: `{"city":"Paris"}`}, {Name: "mcp__demo__add", Args: `{"a":1,"b":1}`}}}
	srv := chattest.New(t, chattest.Turns(add, chattest.Turn{Text: "It is 5."}, echo, chattest.Turn{Text: "Echoed."}, weather, chattest.Turn{Text: "Mild, 2."}))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "add\r")
	at = expect(t, scr, at, "(\"always\" is kept for later runs in "+user+", permissions.allow)")
	at = expect(t, scr, at, "(press the key, no Enter): ")
	io.WriteString(ptmx, "t")
	at = expect(t, scr, at, "mcp__demo__add is allowed from now on: kept in "+user+" (permissions.allow)")
	at = expect(t, scr, at, "It is 5.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "echo\r")
	at = expect(t, scr, at, "(press the key, no Enter): ")
	io.WriteString(ptmx, "s")
	at = expect(t, scr, at, "mcp__demo__* is allowed from now on")
	at = expect(t, scr, at, "Echoed.")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, scr.String())
	}
	b, _ := os.ReadFile(user)
	want := strings.TrimSuffix(before, "# the end\n") + "- id: permissions\n  name: permissions\n  config:\n    allow: [mcp__demo__add, mcp__demo__*]\n# the end\n"
	if d := cmp.Diff(want, string(b)); d != "" {
		t.Errorf("the user config (-want +got):\n%s", d)
	}

	r := mcpbridge(t, "", "agent", "--base-url", srv.URL, "-p", "weather and add")
	if r.code != 0 || strings.Contains(r.stderr, "was not run") {
		t.Errorf("second run: exit %d\n%s", r.code, r.stderr)
	}
	if got := toolResults(srv.Requests()[5]); !strings.Contains(got["call_5_0"], "Paris") || got["call_5_1"] != "2" {
		t.Errorf("second run's results: %v", got)
	}
}

// At a terminal a tool the user config denies is refused without a
// question, the person told which pattern in which file refused it.
func TestAgentDenyWithoutAskingOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	user := userConfig(t, "- {id: permissions, name: permissions, config: {deny: [mcp__demo]}}\n")
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__echo", Args: `{"message":"hi"}`}}}, chattest.Turn{Text: "Refused."}))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "echo\r")
	at = expect(t, scr, at, `tool mcp__demo__echo was refused without asking: denied by "mcp__demo" in `+user)
	at = expect(t, scr, at, "Refused.")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 || strings.Contains(scr.String(), "Run mcp__demo__echo") {
		t.Errorf("exit %d, asked or not:\n%s", code, scr.String())
	}
}

// A key typed during a turn, before the question shows, does not answer
// it: "y" typed ahead is discarded, and the question waits for a key
// pressed once it is asked.
func TestAgentTypeAheadIgnoredOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	typed := make(chan struct{})
	add := chattest.Turn{Calls: []chattest.Call{{Name: "mcp__demo__add", Args: `{"a":2,"b":3}`}}}
	srv := chattest.New(t, func(n int, _ *chatapi.Request) chattest.Turn {
		if n == 0 {
			<-typed // the "y" is in the terminal's input before the question
			return add
		}
		return chattest.Turn{Text: "Not added."}
	})
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "add\r")
	at = expect(t, scr, at, "add")
	io.WriteString(ptmx, "y")
	close(typed)
	at = expect(t, scr, at, "(press the key, no Enter): ")
	io.WriteString(ptmx, "n")
	at = expect(t, scr, at, "no\r\n")
	at = expect(t, scr, at, "Not added.")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 || strings.Contains(scr.String(), "yes, once") {
		t.Errorf("exit %d:\n%q", code, scr.String())
	}
	if got := toolResults(srv.Requests()[1]); !strings.Contains(got["call_1_0"], "the user denied this tool call") {
		t.Errorf("results %v", got)
	}
}

// /clear starts a new session; one that cannot be made (the sessions
// folder is gone, a file in its place) leaves the conversation and its session as
// they were: what follows is saved after what came before, in the same
// session, not after a conversation cleared in memory only.
func TestAgentClearKeepsTheConversationWhenNoSessionOpens(t *testing.T) {
	sessions := agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "First."}, chattest.Turn{Text: "Second."}))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "one\r")
	at = expect(t, scr, at, "First.")
	at = expect(t, scr, at, "› ")
	if err := os.Rename(sessions, sessions+".moved"); err != nil { // the session's file stays open
		t.Fatal(err)
	}
	if err := os.WriteFile(sessions, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	io.WriteString(ptmx, "/clear\r")
	at = expect(t, scr, at, "mcpbridge: ")
	io.WriteString(ptmx, "two\r")
	at = expect(t, scr, at, "Second.")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, scr.String())
	}
	if msgs := srv.Requests()[1].Messages; len(msgs) < 4 || msgs[1].Content != "one" {
		t.Errorf("the second request after a /clear that failed: %+v, want the first exchange kept", msgs)
	}
}

// At a terminal, the end of a run says which session it saved and the
// command that goes on with it, of the session /clear opened when it
// did; a run that saved nothing says nothing of it.
func TestAgentSaysHowToGoOnOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "First."}, chattest.Turn{Text: "Second."}))
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 || strings.Contains(scr.String(), "continue it with") {
		t.Errorf("a run that saved nothing: exit %d:\n%s", code, scr.String())
	}

	ptmx, scr, wait = agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "one\r")
	at = expect(t, scr, at, "First.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/clear\r")
	at = expect(t, scr, at, "new conversation, session ")
	id := strings.Fields(scr.String()[at:])[0]
	io.WriteString(ptmx, "two\r")
	at = expect(t, scr, at, "Second.")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	expect(t, scr, at, "mcpbridge: session "+id+" saved; continue it with: mcpbridge agent --resume "+id+"\r\n")
	if code := wait(); code != 0 {
		t.Errorf("exit %d:\n%s", code, scr.String())
	}
}

// At a terminal a conversation the API refuses as longer than the
// model's context window is told with /clear, the way on, and a run left
// then says its session cannot go on rather than how to resume it.
func TestAgentContextTooLongOnPTY(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "First."}))
	srv.Fail(chattest.Fault{Status: 400, Message: "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens."})
	ptmx, scr, wait := agentOnPTY(t, "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "one\r")
	at = expect(t, scr, at, "(the conversation is longer than the model's context window)\r\n")
	at = expect(t, scr, at, "mcpbridge: /clear starts a new conversation, in a new session; ask for less at once if one prompt's work filled it\r\n")
	at = expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	expect(t, scr, at, "is longer than the model's context window, so it cannot go on: start a new session")
	if code := wait(); code != 0 || strings.Contains(scr.String(), "continue it with") {
		t.Errorf("exit %d:\n%s", code, scr.String())
	}
}

// Ctrl-C at a question asked for a code-mode program's call cancels the
// turn, as it does for a direct call: the program's other call is not
// asked about, and the model is not asked again.
func TestAgentCodeModeCtrlCAtAQuestionCancelsTheTurn(t *testing.T) {
	agentEnv(t)
	t.Chdir(t.TempDir())
	srv := codeModeTurns(t)
	ptmx, scr, wait := agentOnPTY(t, "--code-mode", "--base-url", srv.URL)
	at := expect(t, scr, 0, "› ")
	io.WriteString(ptmx, "add\r")
	at = expect(t, scr, at, "Run mcp__demo__")
	at = expect(t, scr, at, "(press the key, no Enter)") // the terminal is raw: Ctrl-C is a key
	io.WriteString(ptmx, "\x03")
	at = expect(t, scr, at, "cancelling the turn")
	expect(t, scr, at, "› ")
	io.WriteString(ptmx, "/exit\r")
	if code := wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, scr.String())
	}
	if n := strings.Count(scr.String(), "Run mcp__demo__"); n != 1 || len(srv.Requests()) != 1 {
		t.Errorf("after Ctrl-C at the first question: %d questions, %d model requests; want 1 and 1:\n%s", n, len(srv.Requests()), scr.String())
	}
}
