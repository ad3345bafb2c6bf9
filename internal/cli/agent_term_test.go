package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

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
	r, typed, stderr := questionRun(t)
	e := r.e
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

// A server's form starts on a clean line: a call's progress line drawn
// before it is erased, as before an approval, not left on the screen
// above the form as if the call were still at it.
func TestFormStartsOnACleanLine(t *testing.T) {
	r, typed, stderr := questionRun(t)
	running := tool.Tool{Name: "mcp__slow__work", Origin: tool.Origin{Server: "slow", Name: "work"}}
	progress := r.callContext(context.Background(), agent.Call{Name: running.Name, Tool: running})
	tool.ReportProgress(progress, tool.Progress{Progress: 1, Total: 4, Message: "first"})
	form := make(chan string, 1)
	go func() {
		got, _ := r.e.elicitPerson(context.Background(), "asker", formParams(t, "Who?", `{"type":"object","properties":{"name":{"type":"string"}}}`))
		form <- string(got)
	}()
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.HasSuffix(stderr.String(), "  text: ") }, "no form")
	if lines := screenLines(stderr.String()); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "first") }) {
		t.Errorf("the progress line stayed on the screen with the form:\n%s", strings.Join(lines, "\n"))
	}
	io.WriteString(typed, "Ada\n\n")
	if got := <-form; got != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("the form answered %s", got)
	}

	tool.ReportProgress(progress, tool.Progress{Progress: 2, Total: 4, Message: "second"})
	asked := agent.Call{Name: "mcp__demo__add", Args: []byte(`{"a":2}`), Tool: tool.Tool{Name: "mcp__demo__add", Origin: tool.Origin{Server: "demo", Name: "add"}}}
	answered := make(chan agent.Answer, 1)
	go func() {
		ans, _ := r.askApproval(context.Background(), asked)
		answered <- ans
	}()
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "[y]es once") }, "no question")
	if lines := screenLines(stderr.String()); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "second") }) {
		t.Errorf("the progress line stayed on the screen with the question:\n%s", strings.Join(lines, "\n"))
	}
	io.WriteString(typed, "y\n")
	<-answered
}

// screenLines is the lines a terminal shows for what was written to it:
// \r goes back to the line's start, ESC [ K erases to its end, other
// escape sequences (styles) show nothing.
func screenLines(written string) []string {
	lines := []string{""}
	col := 0
	for i := 0; i < len(written); i++ {
		cur := &lines[len(lines)-1]
		switch c := written[i]; {
		case c == '\n':
			lines, col = append(lines, ""), 0
		case c == '\r':
			col = 0
		case c == '\033' && i+1 < len(written) && written[i+1] == '[':
			j := i + 2
			for j < len(written) && (written[j] < '@' || written[j] > '~') {
				j++
			}
			if j < len(written) && written[j] == 'K' {
				*cur = (*cur)[:col]
			}
			i = j
		default:
			if col < len(*cur) {
				*cur = (*cur)[:col] + string(c) + (*cur)[col+1:]
			} else {
				*cur += string(c)
			}
			col++
		}
	}
	return lines
}

// A server's form abandoned while the person answers it (its call
// cancelled, the server's request timed out) leaves no read of the
// terminal behind, and what was typed for it answers nothing: not the
// next form (a "y" typed for one server's question was another's yes),
// not the approval question after it.
func TestAbandonedFormAnswersNothingAfter(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	defer ptmx.Close()
	echoed := &lockedBuffer{}
	go io.Copy(echoed, ptmx) // until ptmx closes
	stderr := &lockedBuffer{}
	e := &env{IO: IO{Stdin: tty, Stderr: stderr, StdinIsTerminal: true, StderrIsTerminal: true, LookupEnv: func(string) (string, bool) { return "", false }}}
	yesNo := func(message string) json.RawMessage {
		return formParams(t, message, `{"type":"object","properties":{"sure":{"type":"boolean"}},"required":["sure"]}`)
	}
	// shown waits until what was written from from on shows prompt.
	shown := func(what string, from int, prompt string) {
		t.Helper()
		mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String()[from:], prompt) }, "no %s", what)
	}
	// abandon asks a form, gives it up at its field, and types typed.
	abandon := func(typed string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		from := len(stderr.String())
		go func() {
			_, err := e.elicitPerson(ctx, "first", yesNo("Delete it all?"))
			ended <- err
		}()
		shown("form", from, "y/n: ")
		cancel()
		select {
		case err := <-ended:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("abandoned form: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the form did not end with its context")
		}
		from = len(echoed.String())
		io.WriteString(ptmx, typed)
		// The terminal echoes what reached its input.
		mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(echoed.String()[from:], strings.TrimSuffix(typed, "\n")) }, "not echoed")
	}

	abandon("y\n")
	form := make(chan string, 1)
	from := len(stderr.String())
	go func() {
		got, _ := e.elicitPerson(context.Background(), "second", yesNo("Send the report?"))
		form <- string(got)
	}()
	shown("second form", from, "y/n: ")
	io.WriteString(ptmx, "n\n")
	shown("confirmation", from, "[c]ancel: ")
	io.WriteString(ptmx, "\n")
	select {
	case got := <-form:
		if got != `{"action":"accept","content":{"sure":false}}` {
			t.Errorf("the second form answered %s, want its own answer, no:\n%q", got, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the second form was not answered:\n%q", stderr.String())
	}

	r := &agentRun{e: e, f: &flags{}, out: agentterm.NewOutput(io.Discard, stderr, true, false, true), con: termio.NewConsole(tty, stderr, nil)}
	defer r.con.Close()
	asked := agent.Call{Name: "mcp__demo__add", Tool: tool.Tool{Name: "mcp__demo__add", Origin: tool.Origin{Server: "demo", Name: "add"}}}
	for _, typed := range []string{"y\n", "y", ""} { // typed for the form: a line, a key without Enter, nothing
		abandon(typed)
		answered := make(chan error, 1)
		from := len(stderr.String())
		go func() {
			ans, err := r.askApproval(context.Background(), asked)
			if err == nil && ans != agent.Deny {
				err = fmt.Errorf("answer %v, want the key pressed, n", ans)
			}
			answered <- err
		}()
		shown("question", from, "(press the key, no Enter): ")
		io.WriteString(ptmx, "n")
		select {
		case err := <-answered:
			if err != nil {
				t.Errorf("after a form abandoned with %q typed: %v", typed, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("after a form abandoned with %q typed, the question did not read its key:\n%q", typed, stderr.String())
		}
	}
}

// In code mode one call's server may ask its form while another call is
// to be approved: one question at a time has the terminal, so the
// approval waits until the form is answered (both read the same keys: a
// key typed for the form answered the approval, or the form took the
// approval's "y").
func TestOneQuestionAtATime(t *testing.T) {
	r, typed, stderr := questionRun(t)
	e := r.e

	form := make(chan string, 1)
	go func() {
		got, _ := e.elicitPerson(context.Background(), "asker", formParams(t, "Who?", `{"type":"object","properties":{"name":{"type":"string"}}}`))
		form <- string(got)
	}()
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "Who?") }, "no form")
	asked := agent.Call{Name: "mcp__demo__add", Args: []byte(`{"a":2}`), Tool: tool.Tool{Name: "mcp__demo__add", Origin: tool.Origin{Server: "demo", Name: "add"}}}
	answered := make(chan agent.Answer, 1)
	go func() {
		ans, _ := r.askApproval(context.Background(), asked)
		answered <- ans
	}()
	// Asked at once, it would show within moments; it must not show at all.
	time.Sleep(200 * time.Millisecond)
	if s := stderr.String(); strings.Contains(s, "Run mcp__demo__add") {
		t.Fatalf("the approval was asked while the form was open: %q", s)
	}
	io.WriteString(typed, "Ada\n\n")
	if got := <-form; got != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("the form answered %s", got)
	}
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "Run mcp__demo__add") }, "no approval after the form")
	io.WriteString(typed, "y\n")
	select {
	case ans := <-answered:
		if ans != agent.Once {
			t.Errorf("the approval answered %v, want once", ans)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no answer:\n%q", stderr.String())
	}
}

// questionRun is an agent run whose person types to typed and reads
// stderr, as at a terminal; closed when t ends.
func questionRun(t *testing.T) (r *agentRun, typed *io.PipeWriter, stderr *lockedBuffer) {
	keys, typed := io.Pipe()
	t.Cleanup(func() { typed.Close() })
	stderr = &lockedBuffer{}
	e := &env{IO: IO{Stdin: keys, Stderr: stderr, StderrIsTerminal: true, LookupEnv: func(string) (string, bool) { return "", false }}}
	r = &agentRun{e: e, f: &flags{}, out: agentterm.NewOutput(io.Discard, stderr, true, false, true),
		con: termio.NewConsole(keys, stderr, nil)}
	t.Cleanup(r.con.Close)
	e.term.holdEvents(r.out)
	return r, typed, stderr
}

// In direct mode calls run side by side: one call's result, or a notice,
// arriving while another call's server asks its form is shown once the
// form is answered, not written into it (its line and the erase before
// it wiped the line the person was typing on).
func TestEventsWaitWhileAFormIsOpen(t *testing.T) {
	r, typed, stderr := questionRun(t)
	form := make(chan string, 1)
	go func() {
		got, _ := r.e.elicitPerson(context.Background(), "asker", formParams(t, "Who?", `{"type":"object","properties":{"name":{"type":"string"}}}`))
		form <- string(got)
	}()
	mcptest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(stderr.String(), "Who?") }, "no form")
	r.out.Event(agent.Event{Type: agent.EventToolResult, Name: "mcp__other__done", Text: "finished"})
	r.out.Event(agent.Event{Type: agent.EventNotice, Text: "a notice meanwhile"})
	if s := stderr.String(); strings.Contains(s, "mcp__other__done") || strings.Contains(s, "a notice meanwhile") {
		t.Fatalf("events written into the open form: %q", s)
	}
	io.WriteString(typed, "Ada\n\n")
	if got := <-form; got != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("the form answered %s", got)
	}
	s := stderr.String()
	_, after, _ := strings.Cut(s, "Who?")
	result, notice := strings.Index(after, "mcp__other__done"), strings.Index(after, "a notice meanwhile")
	if result < 0 || notice < result {
		t.Errorf("after the form, the result then the notice should show: %q", after)
	}
}
