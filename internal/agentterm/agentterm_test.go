package agentterm_test

import (
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
)

// A result's preview: short text whole; past 6 lines or 160 characters a
// line, what is left out, and at a terminal how to see it.
func TestResultPreview(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct {
		text        string
		interactive bool
		want        string
	}{
		{"5", true, "    5\n"},
		{"", true, ""},
		{"a\x1b[2Jb\n", false, "    a\\x1b[2Jb\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8", false, "    1\n    2\n    3\n    4\n    5\n    6\n    … 2 more lines\n"},
		{long, true, "    " + strings.Repeat("x", 159) + "…\n    … lines cut; Ctrl-O at the prompt (or /expand) shows the whole result\n"},
	} {
		if got := agentterm.ResultPreview(c.text, c.interactive); got != c.want {
			t.Errorf("ResultPreview(%.20q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// The person approving a call reads its arguments whole: a model that pads
// them cannot push what matters out of view (they were cut at 300
// characters, runs of spaces squeezed), and a cut, past 4,000 characters,
// says how much is hidden.
func TestApprovalArgs(t *testing.T) {
	padded := `{"note":"` + strings.Repeat("fine ", 100) + `","command":"rm -rf ~"}`
	for _, c := range []struct{ args, want string }{
		{`{"a":  1}`, `{"a":  1}`},
		{padded, padded},
		{"{\"x\":\"\x1b[2J\"}", `{"x":"\x1b[2J"}`},
		{`"` + strings.Repeat("é", 4001) + `"`, `"` + strings.Repeat("é", 3999) + "… [3 more characters not shown]"},
	} {
		if got := agentterm.Args([]byte(c.args)); got != c.want {
			t.Errorf("Args(%.60q…) = %.80q…, want %.80q…", c.args, got, c.want)
		}
	}
}

// A script reads every event as a JSON line; a person reads the answer
// streamed on stdout, and calls and results, escaped, on stderr.
func TestOutput(t *testing.T) {
	var stdout, stderr strings.Builder
	o := agentterm.NewOutput(&stdout, &stderr, false, true, false)
	o.Event(agent.Event{Type: agent.EventText, Text: "hi"})
	if got := stdout.String(); got != `{"type":"text","text":"hi"}`+"\n" {
		t.Errorf("JSON line %q", got)
	}
	stdout.Reset()
	o = agentterm.NewOutput(&stdout, &stderr, false, false, true)
	o.Event(agent.Event{Type: agent.EventText, Text: "the answer\x1b[2J"})
	o.Event(agent.Event{Type: agent.EventToolCall, Name: "mcp__s__t", Arguments: []byte(`{"a": 1}`)})
	o.Event(agent.Event{Type: agent.EventToolResult, Name: "mcp__s__t", Text: "result", DurationMs: 3})
	if got := stdout.String(); got != "the answer\\x1b[2J\n" {
		t.Errorf("stdout %q", got)
	}
	for _, want := range []string{`● mcp__s__t {"a": 1}`, "✓ mcp__s__t (3 ms)", "    result\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if got := o.ExpandLast(); got != "mcp__s__t returned:\nresult\n" {
		t.Errorf("ExpandLast %q", got)
	}
}

// Each key answers the question once; the server's choice only for a
// tool that has a server.
func TestAnswer(t *testing.T) {
	for _, c := range []struct {
		key       string
		hasServer bool
		want      agent.Answer
		ok        bool
	}{
		{"y", false, agent.Once, true}, {"T", false, agent.AlwaysTool, true}, {"s", true, agent.AlwaysServer, true},
		{"s", false, agent.AlwaysServer, false}, {"n", false, agent.Deny, true}, {"x", true, agent.Deny, false},
	} {
		if got, ok := agentterm.Answer(c.key, c.hasServer); got != c.want || ok != c.ok {
			t.Errorf("Answer(%q, %v) = %v, %v", c.key, c.hasServer, got, ok)
		}
	}
	if !strings.Contains(agentterm.Choices("s"), "[s]erver") || strings.Contains(agentterm.Choices(""), "[s]erver") {
		t.Error("the server choice is offered wrongly")
	}
}
