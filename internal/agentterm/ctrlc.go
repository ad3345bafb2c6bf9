package agentterm

import (
	"context"
	"sync"
)

// CtrlC routes the person's interrupts. SIGINT comes only from a Ctrl-C
// pressed while the terminal is not raw: during a turn, or just before a
// prompt made it raw (at the prompt Ctrl-C is a key, which ends the
// session). The first during a turn cancels the turn; a second exits,
// whether that turn has ended by then or not: its signal can come once
// the turn has ended and the prompt waits. One that comes between turns
// with no turn cancelled cancels nothing: it was pressed as a turn ended
// on its own, and is not kept to cancel the next.
type CtrlC struct {
	mu         sync.Mutex
	turn       context.CancelFunc // the running turn's; nil between turns
	cancelled  bool               // a turn was cancelled, and no line was read since
	cancelling func()             // tells the person the turn is being cancelled
	exit       func()             // ends the session, the prompt's read too
}

// NewCtrlC returns the router: cancelling is called as the first Ctrl-C
// cancels a turn, exit on the second.
func NewCtrlC(cancelling, exit func()) *CtrlC {
	return &CtrlC{cancelling: cancelling, exit: exit}
}

// StartTurn says a turn runs, cancel cancelling it.
func (c *CtrlC) StartTurn(cancel context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn = cancel
}

// EndTurn says the turn has returned.
func (c *CtrlC) EndTurn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn = nil
}

// LineRead says the person entered a line at the prompt: a Ctrl-C after
// it is a first one again.
func (c *CtrlC) LineRead() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled = false
}

// Interrupt takes one SIGINT.
func (c *CtrlC) Interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.cancelled:
		c.exit()
	case c.turn != nil:
		c.cancelled = true
		c.cancelling()
		c.turn()
	}
}
