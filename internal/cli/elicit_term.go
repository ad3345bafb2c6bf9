package cli

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/elicitform"
	"github.com/mcpbridge/mcpbridge/internal/termio"
)

// terminal is the person's side of one run: the stdin lines, and one form
// at a time on stderr.
type terminal struct {
	mu    sync.Mutex
	lines *termio.LineReader // created on first use
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
	if e.term.lines == nil {
		e.term.lines = termio.NewLineReader(e.Stdin)
	}
	return elicitform.Ask(ctx, e.term.lines, e.Stderr, server, params)
}
