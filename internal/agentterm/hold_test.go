package agentterm

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/agent"
)

// Events held while a question is open wait in order, at most maxHeld of
// them (a flood while the person takes their time cannot grow without
// bound), and the rest are counted when they are shown.
func TestHeldEventsBounded(t *testing.T) {
	var stderr strings.Builder
	o := NewOutput(io.Discard, &stderr, false, false, false)
	o.Hold()
	for i := range maxHeld + 5 {
		o.Event(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("n%d", i)})
	}
	if stderr.Len() != 0 || len(o.queue) != maxHeld {
		t.Fatalf("while held: %q shown, %d kept", stderr.String(), len(o.queue))
	}
	o.Release()
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != maxHeld+1 || lines[0] != "mcpbridge: n0" || lines[maxHeld-1] != fmt.Sprintf("mcpbridge: n%d", maxHeld-1) ||
		lines[maxHeld] != "mcpbridge: 5 more events were not shown while a question was open" {
		t.Errorf("released %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	o.Event(agent.Event{Type: agent.EventNotice, Text: "after"})
	if !strings.HasSuffix(stderr.String(), "mcpbridge: after\n") {
		t.Error("an event after Release was not shown at once")
	}
}
