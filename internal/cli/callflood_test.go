package cli

import (
	"bytes"
	"testing"
	"time"
)

// A backend flooding log messages during a call (half a million) does not
// grow `mcpbridge call`: its peak RSS stays far under what the flood
// would take if queued (1,000,000 took 674 MiB before the bound; 28 MiB
// after).
func TestCallLogFloodBounded(t *testing.T) {
	cmd := measuredCommand(t, "call", "--config", flooderConfig(t), "mcp__flooder__flood", `{"n":500000,"kind":"notify"}`)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The call's own peak, read from /proc while it runs: its rusage at
	// exit would count the flooder child (the race-instrumented test
	// binary under make test) too.
	peakKiB := 0
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			if n, rerr := readProcStatusKiB(cmd.Process.Pid, "VmHWM"); rerr == nil && n > peakKiB {
				peakKiB = n
			}
		}
	}
	if err != nil || out.String() != "flooded\n" {
		t.Fatalf("call: %v\n%.2000s", err, out.String())
	}
	const limit = 100 // MiB
	t.Logf("peak RSS of call: %d MiB", peakKiB>>10)
	if peak := peakKiB >> 10; peak > limit || peakKiB == 0 {
		t.Errorf("peak RSS %d MiB (0: never read), over %d MiB", peak, limit)
	}
}
