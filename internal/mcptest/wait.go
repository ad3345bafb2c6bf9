package mcptest

import (
	"fmt"
	"testing"
	"time"
)

// pollInterval is how often Eventually checks its condition.
const pollInterval = 5 * time.Millisecond

// Eventually polls cond until it holds, failing the test once timeout has
// passed without it; the failure says what was awaited, format and args
// as in fmt.Sprintf (formatted only then, so a fmt.Stringer argument shows
// the state at the failure). The timeout only bounds how long a broken test
// hangs: pick it generous, never as what decides whether a working test
// passes.
//
// Call it from the test's goroutine, since it may call t.Fatalf.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, fmt.Sprintf(format, args...))
		}
		time.Sleep(pollInterval) // polling interval, not a wait for an event
	}
}
