package cli

import (
	"syscall"
	"testing"
)

// A backend flooding log messages during a call (half a million) does not
// grow `mcpbridge call`: its peak RSS stays far under what the flood
// would take if queued (1,000,000 took 674 MiB before the bound; 28 MiB
// after).
func TestCallLogFloodBounded(t *testing.T) {
	cmd := measuredCommand(t, "call", "--config", flooderConfig(t), "mcp__flooder__flood", `{"n":500000,"kind":"notify"}`)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "flooded\n" {
		t.Fatalf("call: %v\n%.2000s", err, out)
	}
	const limit = 100 // MiB
	if peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10; peak > limit {
		t.Errorf("peak RSS %d MiB, over %d MiB", peak, limit)
	}
}
