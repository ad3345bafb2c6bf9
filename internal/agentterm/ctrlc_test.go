package agentterm_test

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/agentterm"
)

// ctrlCSeen counts what a CtrlC did.
type ctrlCSeen struct{ said, cancelled, exited int }

func newCtrlC() (*agentterm.CtrlC, *ctrlCSeen) {
	seen := &ctrlCSeen{}
	return agentterm.NewCtrlC(func() { seen.said++ }, func() { seen.exited++ }), seen
}

// The first Ctrl-C of a turn cancels it, saying so; a second exits,
// during the turn or once it has ended (its signal may come after the
// turn returned, when the prompt already waits).
func TestCtrlCCancelsThenExits(t *testing.T) {
	for _, endedFirst := range []bool{false, true} {
		c, seen := newCtrlC()
		c.StartTurn(func() { seen.cancelled++ })
		c.Interrupt()
		if *seen != (ctrlCSeen{said: 1, cancelled: 1}) {
			t.Errorf("after the first Ctrl-C: %+v, want the turn cancelled and that said", *seen)
		}
		if endedFirst {
			c.EndTurn()
		}
		c.Interrupt()
		if *seen != (ctrlCSeen{said: 1, cancelled: 1, exited: 1}) {
			t.Errorf("second Ctrl-C, the turn ended before it %v: %+v, want an exit", endedFirst, *seen)
		}
	}
}

// A Ctrl-C between turns, none cancelled, cancels nothing, not the next
// turn either; a Ctrl-C after a line was read at the prompt is a first
// one again.
func TestCtrlCBetweenTurns(t *testing.T) {
	c, seen := newCtrlC()
	c.StartTurn(func() { seen.cancelled++ })
	c.EndTurn()
	c.Interrupt() // pressed as the turn ended on its own
	c.LineRead()
	c.StartTurn(func() { seen.cancelled++ })
	if *seen != (ctrlCSeen{}) {
		t.Errorf("a Ctrl-C between turns: %+v, want nothing done", *seen)
	}
	c.Interrupt()
	c.EndTurn()
	c.LineRead()
	c.StartTurn(func() { seen.cancelled++ })
	c.Interrupt()
	if *seen != (ctrlCSeen{said: 2, cancelled: 2}) {
		t.Errorf("a Ctrl-C in each of two turns: %+v, want both cancelled, no exit", *seen)
	}
}
