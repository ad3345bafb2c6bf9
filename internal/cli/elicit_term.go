package cli

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
	"github.com/mcpbridge/mcpbridge/internal/termio"
)

// terminal is the person's side of one run: the stdin lines, one question
// at a time on stderr (a form, an approval), and whether one is open.
type terminal struct {
	mu    sync.Mutex
	lines *termio.LineReader // created on first use

	asked sync.Mutex    // guards turn, open, held and erase
	turn  chan struct{} // held by the question open; made on first use
	open  bool          // a question is open now
	held  func()        // draws the latest progress held while one was
	erase func()        // clears the progress line on the screen, if any
	// events holds the agent's events while a question is open; nil
	// outside the agent.
	events eventHolder
}

// eventHolder holds what it shows while a question is open
// (agentterm.Output).
type eventHolder interface {
	Hold()
	Release()
}

// asking waits for the terminal (two questions would read the same keys:
// in code mode a call's form and another call's approval) and marks a
// question open on stderr until done is called. Progress waits
// meanwhile: its line starts with \r and an erase, which would wipe the
// question's last line, the choices on it.
func (t *terminal) asking(ctx context.Context) (done func(), err error) {
	t.asked.Lock()
	if t.turn == nil {
		t.turn = make(chan struct{}, 1)
	}
	turn := t.turn
	t.asked.Unlock()
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.asked.Lock()
	t.open = true
	events := t.events
	if t.erase != nil {
		// The question starts on a clean line, not after the progress.
		t.erase()
		t.erase = nil
	}
	t.asked.Unlock()
	if events != nil {
		events.Hold()
	}
	return sync.OnceFunc(func() {
		if events != nil {
			events.Release()
		}
		t.asked.Lock()
		t.open = false
		if t.held != nil {
			t.held() // the latest, not every line held
			t.held = nil
		}
		t.asked.Unlock()
		<-turn
	}), nil
}

// holdEvents has events held while a question is open.
func (t *terminal) holdEvents(events eventHolder) {
	t.asked.Lock()
	defer t.asked.Unlock()
	t.events = events
}

// showProgress draws a progress line now, or once no question is open;
// erase (nil: none) clears what draw drew, and a question opening calls
// it.
func (t *terminal) showProgress(draw, erase func()) {
	t.asked.Lock()
	defer t.asked.Unlock()
	if t.open {
		t.held = func() { draw(); t.erase = erase }
		return
	}
	draw()
	t.erase = erase
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
	done, err := e.term.asking(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if e.term.lines == nil {
		e.term.lines = termio.NewLineReader(e.Stdin)
	}
	return elicitform.Ask(ctx, e.term.lines, e.Stderr, server, params)
}
