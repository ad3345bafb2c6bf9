package cli

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/termio"
	"github.com/mcpbridge/mcpbridge/tool"
)

// In code mode one call of a program runs while the next is asked about:
// its progress is not written over the open question (a progress line
// starts with \r and erases the line, the choices with it), and the latest
// held shows once the question is answered, the call's next after it.
func TestProgressWaitsWhileAQuestionIsOpen(t *testing.T) {
	keys, typed := io.Pipe()
	defer typed.Close()
	stderr := &lockedBuffer{}
	e := &env{IO: IO{Stdin: keys, Stderr: stderr, StderrIsTerminal: true, LookupEnv: func(string) (string, bool) { return "", false }}}
	r := &agentRun{e: e, f: &flags{}, out: agentterm.NewOutput(io.Discard, stderr, true, false, true),
		con: termio.NewConsole(keys, stderr, nil)}
	defer r.con.Close()
	running := tool.Tool{Name: "mcp__slow__work", Origin: tool.Origin{Server: "slow", Name: "work"}}
	progress := r.callContext(context.Background(), agent.Call{Name: running.Name, Tool: running})
	tool.ReportProgress(progress, tool.Progress{Progress: 1, Total: 4, Message: "first"})

	asked := agent.Call{Name: "mcp__demo__add", Args: []byte(`{"a":2}`), Tool: tool.Tool{Name: "mcp__demo__add", Origin: tool.Origin{Server: "demo", Name: "add"}}}
	answered := make(chan agent.Answer, 1)
	go func() {
		ans, _ := r.askApproval(context.Background(), asked)
		answered <- ans
	}()
	const choices = "[y]es once" // the line editor wraps the rest: stdin is no terminal here
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), choices) }, "no question")
	tool.ReportProgress(progress, tool.Progress{Progress: 2, Total: 4, Message: "second"})
	_, after, _ := strings.Cut(stderr.String(), choices)
	if strings.Contains(after, "second") || strings.Contains(after, "\r\033[K") {
		t.Errorf("progress written over the open question: %q", after)
	}
	io.WriteString(typed, "y\n")
	select {
	case ans := <-answered:
		if ans != agent.Once {
			t.Errorf("answer %v, want once", ans)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer:\n%q", stderr.String())
	}
	tool.ReportProgress(progress, tool.Progress{Progress: 3, Total: 4, Message: "third"})
	if s := stderr.String(); strings.Count(s, "second") != 1 ||
		!strings.HasSuffix(s, "yes, once\n\r\033[Kmcp__slow__work 2/4 (50%) second\r\033[Kmcp__slow__work 3/4 (75%) third") {
		t.Errorf("after the answer: %q, want the progress held shown once, then the next", s)
	}

	// A server's form is a question too.
	form := make(chan string, 1)
	go func() {
		got, _ := e.elicitPerson(context.Background(), "asker", formParams(t, "Who?", `{"type":"object","properties":{"name":{"type":"string"}}}`))
		form <- string(got)
	}()
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "Who?") }, "no form")
	tool.ReportProgress(progress, tool.Progress{Progress: 4, Total: 4, Message: "fourth"})
	io.WriteString(typed, "Ada\n\n")
	const held = "\r\033[Kmcp__slow__work 4/4 (100%) fourth"
	got := <-form
	if before, ok := strings.CutSuffix(stderr.String(), held); got != `{"action":"accept","content":{"name":"Ada"}}` || !ok ||
		strings.Contains(before, "fourth") || !strings.HasSuffix(before, "[c]ancel: ") {
		t.Errorf("form answered %s; want no progress over it, the progress held shown once it was answered: %q", got, stderr.String())
	}
}
