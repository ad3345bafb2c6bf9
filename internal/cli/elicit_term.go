package cli

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
	"github.com/mcpbridge/mcpbridge/internal/termio"
)

// terminal is the person's side of one run: the stdin lines, one form at
// a time on stderr, and whether a question (a form, an approval) is open.
type terminal struct {
	mu    sync.Mutex
	lines *termio.LineReader // created on first use

	asked sync.Mutex // guards open and held
	open  int        // questions open now
	held  func()     // draws the latest progress held while one was
}

// asking marks a question open on stderr until done is called. Progress
// waits meanwhile: its line starts with \r and an erase, which would
// wipe the question's last line, the choices on it.
func (t *terminal) asking() (done func()) {
	t.asked.Lock()
	t.open++
	t.asked.Unlock()
	return sync.OnceFunc(func() {
		t.asked.Lock()
		defer t.asked.Unlock()
		t.open--
		if t.open == 0 && t.held != nil {
			t.held() // the latest, not every line held
			t.held = nil
		}
	})
}

// showProgress draws a progress line now, or once no question is open.
func (t *terminal) showProgress(draw func()) {
	t.asked.Lock()
	defer t.asked.Unlock()
	if t.open > 0 {
		t.held = draw
		return
	}
	draw()
}

// asksPerson reports whether elicitation is put to a person: no --elicit,
// and both stdin and stderr are terminals.
func (e *env) asksPerson() bool {
	return e.elicitMode == "" && e.StdinIsTerminal && e.StderrIsTerminal
}

// elicitPerson asks the person at the terminal the elicitation of server.
func (e *env) elicitPerson(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	e.term.mu.Lock()
	defer e.term.mu.Unlock()
	defer e.term.asking()()
	if e.term.lines == nil {
		e.term.lines = termio.NewLineReader(e.Stdin)
	}
	return elicitform.Ask(ctx, e.term.lines, e.Stderr, server, params)
}
