// Package agentterm shows an agent's run to a person or a script: its
// events (agent.Event) as JSON lines, or as text, the answer streamed on
// stdout and reasoning, calls and previews of their results on stderr;
// and the approval question's parts (the arguments shown whole, the
// choices, the key's answer); and what Ctrl-C does (CtrlC).
package agentterm

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// ANSI styles of the terminal view.
const (
	dim   = "\033[2m"
	reset = "\033[0m"
)

// Output shows the events of a run: JSON lines on stdout (--json);
// else the answer streamed on stdout at a terminal (only the final answer
// with -p, printed by the caller) and the rest, reasoning dim, on stderr.
// Its methods are safe for concurrent use.
type Output struct {
	mu          sync.Mutex
	json        *json.Encoder
	stdout      io.Writer
	stderr      io.Writer
	streamText  bool // interactive: the answer as it comes
	showDetails bool // reasoning and calls on stderr
	color       bool
	inReasoning bool
	textOpen    bool // streamed text has no line end yet
	progressOn  bool
	last        *agent.Event // the last tool result, for expandLast
	held        bool         // a question is open: events wait in queue
	queue       []agent.Event
	dropped     int // events past maxHeld while held
}

// maxHeld bounds the events kept while a question is open; past it they
// are counted, and the count shown.
const maxHeld = 1024

// A tool result is previewed in its first resultLines lines, each cut at
// resultWidth characters: enough to see what came back, never a screen
// scrolled away; expandLast shows it whole.
const (
	resultLines = 6
	resultWidth = 160
)

// NewOutput shows events on stdout and stderr: as JSON lines on stdout
// with asJSON; interactive streams the answer; a stderr that is a
// terminal shows details in color.
func NewOutput(stdout, stderr io.Writer, stderrIsTerminal, asJSON, interactive bool) *Output {
	o := &Output{stdout: stdout, stderr: stderr, streamText: interactive,
		showDetails: interactive || stderrIsTerminal, color: stderrIsTerminal}
	if asJSON {
		o.json = json.NewEncoder(stdout)
		o.json.SetEscapeHTML(false)
	}
	return o
}

// Event shows one event.
func (o *Output) Event(ev agent.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json != nil {
		o.json.Encode(ev)
		return
	}
	if o.held {
		if len(o.queue) < maxHeld {
			o.queue = append(o.queue, ev)
		} else {
			o.dropped++
		}
		return
	}
	o.show(ev)
}

// Hold keeps the events shown from now until Release: a question is open
// on the terminal (another call's server form, an approval), and an
// event's lines, and the erase of the line before them, would be written
// over it. JSON lines go on: they are not the question's terminal's. The
// progress line goes: the question starts on a clean line.
func (o *Output) Hold() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clearProgress()
	o.held = true
}

// Release shows the events held, in order, and those after as they come.
func (o *Output) Release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held = false
	for _, ev := range o.queue {
		o.show(ev)
	}
	if o.dropped > 0 {
		o.show(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("%d more events were not shown while a question was open", o.dropped)})
	}
	o.queue, o.dropped = nil, 0
}

// show shows ev as text. Under o.mu.
func (o *Output) show(ev agent.Event) {
	o.clearProgress()
	switch ev.Type {
	case agent.EventReasoning:
		if o.showDetails {
			o.inReasoning = true
			o.styled(o.stderr, dim, termsafe.Text(ev.Text))
		}
		return
	case agent.EventText:
		o.endReasoning()
		if o.streamText {
			fmt.Fprint(o.stdout, termsafe.Text(ev.Text))
			o.textOpen = !strings.HasSuffix(ev.Text, "\n")
		}
		return
	}
	o.endReasoning()
	if o.textOpen && ev.Type != agent.EventUsage {
		fmt.Fprintln(o.stdout)
		o.textOpen = false
	}
	o.detail(ev)
}

// detail shows calls, results and notices on stderr.
func (o *Output) detail(ev agent.Event) {
	switch ev.Type {
	case agent.EventNotice:
		fmt.Fprintf(o.stderr, "mcpbridge: %s\n", termsafe.Line(ev.Text))
	case agent.EventToolCall:
		if o.showDetails {
			fmt.Fprintf(o.stderr, "● %s %s\n", termsafe.Line(ev.Name), termsafe.Line(Short(string(ev.Arguments), 200)))
		}
	case agent.EventToolResult:
		if !o.showDetails {
			return
		}
		mark, note := "✓", fmt.Sprintf("%d ms", ev.DurationMs)
		if ev.IsError {
			mark, note = "✗", Short(ev.Text, 200)
		}
		if ev.Spilled != "" {
			note += ", cut; whole result in " + ev.Spilled
		}
		o.styled(o.stderr, dim, fmt.Sprintf("  %s %s (%s)\n", mark, termsafe.Line(ev.Name), termsafe.Line(note)))
		if !ev.Denied {
			o.last = &ev
			if !ev.IsError { // an error's text is in its note
				o.styled(o.stderr, dim, ResultPreview(ev.Text, o.streamText))
			}
		}
	case agent.EventResult:
		if o.streamText && ev.Usage != nil {
			o.styled(o.stderr, dim, fmt.Sprintf("\n[%d steps, %d tokens in (%d cached), %d out]\n", ev.Steps,
				ev.Usage.PromptTokens, ev.Usage.PromptCacheHitTokens, ev.Usage.CompletionTokens))
		}
	}
}

func (o *Output) endReasoning() {
	if o.inReasoning {
		o.inReasoning = false
		fmt.Fprintln(o.stderr)
	}
}

func (o *Output) styled(w io.Writer, style, s string) {
	if o.color {
		s = style + s + reset
	}
	fmt.Fprint(w, s)
}

// ResultPreview is the first lines of a result's text, indented, and
// how much is left out; interactive says how to see the rest.
func ResultPreview(text string, interactive bool) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	shown := lines[:min(len(lines), resultLines)]
	cut := len(shown) < len(lines)
	var b strings.Builder
	for _, l := range shown {
		r := []rune(termsafe.Line(l))
		if len(r) > resultWidth {
			r, cut = append(r[:resultWidth-1], '…'), true
		}
		fmt.Fprintf(&b, "    %s\n", string(r))
	}
	if !cut {
		return b.String()
	}
	b.WriteString("    … ")
	if more := len(lines) - len(shown); more > 0 {
		fmt.Fprintf(&b, "%d more lines", more)
	} else {
		b.WriteString("lines cut")
	}
	if interactive {
		b.WriteString("; Ctrl-O at the prompt (or /expand) shows the whole result")
	}
	b.WriteString("\n")
	return b.String()
}

// ExpandLast is the last tool result whole, as the model read it.
func (o *Output) ExpandLast() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last == nil {
		return "no tool has returned a result yet\n"
	}
	s := fmt.Sprintf("%s returned:\n%s\n", termsafe.Line(o.last.Name), termsafe.Text(strings.TrimRight(o.last.Text, "\n")))
	if o.last.Spilled != "" {
		s += "(cut for the model; the whole result is in " + termsafe.Line(o.last.Spilled) + ")\n"
	}
	return s
}

// Progress shows one live line of a call's progress on stderr.
func (o *Output) Progress(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(o.stderr, "\r\033[K%s", line)
	o.progressOn = true
}

func (o *Output) clearProgress() {
	if o.progressOn {
		fmt.Fprint(o.stderr, "\r\033[K")
		o.progressOn = false
	}
}

// Short is s on one line, cut to n runes.
func Short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
